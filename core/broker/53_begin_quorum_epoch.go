package broker

// BeginQuorumEpoch (key 53), versions 0-1. Node to node, on the controller
// listener.
//
// A newly elected leader of the metadata quorum announces itself to the
// voters, so they follow it without waiting for a fetch timeout. The
// quorum (core/quorum) answers; see KIP-595.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 53, advertisedMin: 0, honouredMin: 0, max: 1, nodeToNode: true, handle: (*Broker).handleBeginQuorumEpoch})
}

func (b *Broker) handleBeginQuorumEpoch(x *exchange) {
	b.quorum.HandleBeginQuorumEpoch(x.request.Body.(*kmsg.BeginQuorumEpochRequest), func(resp *kmsg.BeginQuorumEpochResponse) { x.respond(resp) })
}
