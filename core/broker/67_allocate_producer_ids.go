package broker

// AllocateProducerIds (key 67), version 0. Node to node, on the controller
// listener.
//
// A broker that ran out of producer ids for InitProducerId asks the active
// controller for the next block (KIP-730; core/controller,
// AllocateProducerIDs). A controller that is not the active one answers
// NOT_CONTROLLER.

import "github.com/twmb/franz-go/pkg/kmsg"

// allocateProducerIDsVersion is the version brokers send.
const allocateProducerIDsVersion = 0

func init() {
	registerAPI(&api{key: 67, advertisedMin: 0, honouredMin: 0, max: allocateProducerIDsVersion, nodeToNode: true, handle: (*Broker).handleAllocateProducerIDs})
}

func (b *Broker) handleAllocateProducerIDs(x *exchange) {
	b.controller.AllocateProducerIDs(x.request.Body.(*kmsg.AllocateProducerIDsRequest), func(resp *kmsg.AllocateProducerIDsResponse) { x.respond(resp) })
}
