package broker

// ListPartitionReassignments (key 46), version 0:
// kafka-reassign-partitions.sh --verify and --list,
// AdminClient.listPartitionReassignments (KIP-455).
//
// The active controller answers from its image (core/controller,
// reassign.go): the reassignments in progress, each with its replicas and
// the members being added and removed; any broker forwards the request to
// it.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 46, advertisedMin: 0, honouredMin: 0, max: 0, handle: (*Broker).handleListPartitionReassignments})
}

func (b *Broker) handleListPartitionReassignments(x *exchange) {
	b.forward(x.request.Body.(*kmsg.ListPartitionReassignmentsRequest), func(resp kmsg.Response) { x.respond(resp) })
}
