package broker

// ElectLeaders (key 43), versions 0-2: kafka-leader-election.sh and
// AdminClient.electLeaders (KIP-460).
//
// The active controller elects (core/controller, ElectLeaders): a
// partition's preferred replica, or a leader for a leaderless partition
// from outside its ISR; any broker forwards the request to it.
//
// Version notes: v0 elects preferred leaders only and has no top-level
// error; v1 adds ElectionType and the top-level ErrorCode; v2 is flexible.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 43, advertisedMin: 0, honouredMin: 0, max: 2, handle: (*Broker).handleElectLeaders})
}

func (b *Broker) handleElectLeaders(x *exchange) {
	b.forward(x.request.Body.(*kmsg.ElectLeadersRequest), func(resp kmsg.Response) { x.respond(resp) })
}
