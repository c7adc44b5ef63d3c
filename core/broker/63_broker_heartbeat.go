package broker

// BrokerHeartbeat (key 63), versions 0-1. Node to node, on the controller
// listener.
//
// Every broker heartbeats to the active controller every
// broker.heartbeat.interval.ms with the metadata offset it has applied;
// the controller renews its session, unfences it once caught up, fences it
// when the heartbeats stop, and runs its controlled shutdown
// (core/controller, BrokerHeartbeat). A controller that is not the active
// one answers NOT_CONTROLLER.
//
// Version notes: v1 OfflineLogDirs (ignored: one data directory, which
// halts the node when it fails).

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 63, advertisedMin: 0, honouredMin: 0, max: brokerHeartbeatVersion, nodeToNode: true, handle: (*Broker).handleBrokerHeartbeat})
}

func (b *Broker) handleBrokerHeartbeat(x *exchange) {
	b.controller.BrokerHeartbeat(x.request.Body.(*kmsg.BrokerHeartbeatRequest), x)
}
