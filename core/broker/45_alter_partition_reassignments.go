package broker

// AlterPartitionReassignments (key 45), versions 0-1:
// kafka-reassign-partitions.sh --execute and --cancel,
// AdminClient.alterPartitionReassignments (KIP-455).
//
// The active controller starts, replaces or cancels the reassignments
// (core/controller, reassign.go); any broker forwards the request to it.
// The answer means the reassignment started: the new replicas then catch
// up, join the ISR, and the removed ones go, which
// ListPartitionReassignments (key 46) follows. A broker whose replica a
// completed reassignment removed deletes its copy (partitions.go).
//
// Version notes: v0 is flexible; v1 adds AllowReplicationFactorChange
// (KIP-1074; v0 always allows it).

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 45, advertisedMin: 0, honouredMin: 0, max: 1, handle: (*Broker).handleAlterPartitionReassignments})
}

func (b *Broker) handleAlterPartitionReassignments(x *exchange) {
	b.forward(x.request.Body.(*kmsg.AlterPartitionAssignmentsRequest), func(resp kmsg.Response) { x.respond(resp) })
}
