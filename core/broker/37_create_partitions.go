package broker

// CreatePartitions (key 37), versions 0-3.
//
// The controller adds the partitions (core/controller, CreatePartitions:
// automatic placement continuing the topic's pattern, or a manual
// Assignment; ValidateOnly). As for CreateTopics, the answer is sent once
// this broker has applied the change and opened the new partitions it
// leads, so produce requests to them succeed at once.
//
// Version notes: v2 is flexible; v3 is v2 with throttling on quota
// violation (no quotas here).

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 37, advertisedMin: 0, honouredMin: 0, max: 3, handle: (*Broker).handleCreatePartitions})
}

func (b *Broker) handleCreatePartitions(x *exchange) {
	req := x.request.Body.(*kmsg.CreatePartitionsRequest)
	b.controller.CreatePartitions(req, func(resp *kmsg.CreatePartitionsResponse) { x.respond(resp) })
}
