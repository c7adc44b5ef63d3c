package broker

// EndQuorumEpoch (key 54), versions 0-1. Node to node, on the controller
// listener.
//
// A leader of the metadata quorum that resigns (a graceful shutdown) tells
// the voters, so that they elect a successor at once rather than after an
// election timeout. The quorum (core/quorum) answers; see KIP-595.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 54, advertisedMin: 0, honouredMin: 0, max: 1, nodeToNode: true, handle: (*Broker).handleEndQuorumEpoch})
}

func (b *Broker) handleEndQuorumEpoch(x *exchange) {
	b.quorum.HandleEndQuorumEpoch(x.request.Body.(*kmsg.EndQuorumEpochRequest), func(resp *kmsg.EndQuorumEpochResponse) { x.respond(resp) })
}
