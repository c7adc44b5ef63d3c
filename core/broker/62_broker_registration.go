package broker

// BrokerRegistration (key 62), versions 0-3. Node to node, on the
// controller listener.
//
// A broker announces itself to the active controller at start (KIP-631)
// and gets its broker epoch (core/controller, RegisterBroker). A
// controller that is not the active one answers NOT_CONTROLLER; the broker
// looks for the quorum leader and retries (lifecycle.go).
//
// Version notes: v1 IsMigratingZkBroker (always false here); v2 LogDirs;
// v3 PreviousBrokerEpoch (read as -1: every registration is a new
// incarnation, KIP-966's clean-shutdown shortcut is not taken).

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 62, advertisedMin: 0, honouredMin: 0, max: brokerRegistrationVersion, nodeToNode: true, handle: (*Broker).handleBrokerRegistration})
}

func (b *Broker) handleBrokerRegistration(x *exchange) {
	b.controller.RegisterBroker(x.request.Body.(*kmsg.BrokerRegistrationRequest), func(resp *kmsg.BrokerRegistrationResponse) { x.respond(resp) })
}
