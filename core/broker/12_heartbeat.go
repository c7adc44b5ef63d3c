package broker

// Heartbeat (key 12), versions 0-4.
//
// Handed to the group coordinator (core/group, heartbeat.go): it keeps a
// member's session alive and answers REBALANCE_IN_PROGRESS when the
// member must rejoin.
//
// Version notes: v3 adds group.instance.id (static members are fenced
// with FENCED_INSTANCE_ID); v4 is flexible.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 12, advertisedMin: 0, honouredMin: 0, max: 4, handle: (*Broker).handleHeartbeat})
}

func (b *Broker) handleHeartbeat(x *exchange) {
	x.respond(b.groups.coordinator.Heartbeat(x.request.Body.(*kmsg.HeartbeatRequest)))
}
