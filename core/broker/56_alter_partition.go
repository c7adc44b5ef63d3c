package broker

// AlterPartition (key 56), versions 0-3. Node to node, on the controller
// listener.
//
// A partition leader asks the controller to change the partition's ISR
// (KIP-497; KIP-903 adds broker epochs to the new ISR in v3). This node's
// controller judges it (core/controller, AlterPartition) if it is the
// active one, and answers NOT_CONTROLLER otherwise; the leader then finds
// the active controller through the quorum and retries.
//
// Version notes: v1 LeaderRecoveryState; v2 topic ids instead of names;
// v3 NewIsrWithEpochs.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 56, advertisedMin: 0, honouredMin: 0, max: 3, nodeToNode: true, handle: (*Broker).handleAlterPartition})
}

func (b *Broker) handleAlterPartition(x *exchange) {
	b.controller.AlterPartition(x.request.Body.(*kmsg.AlterPartitionRequest), func(resp *kmsg.AlterPartitionResponse) { x.respond(resp) })
}
