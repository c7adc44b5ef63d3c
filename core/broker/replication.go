package broker

// How the broker connects its partition replicas to the cluster (the
// replication itself is core/replica's):
//
//   - reconcileTopic (partitions.go) gives each hosted partition the role
//     the metadata decided: leader, or follower of the metadata's leader;
//   - a follower fetches from its leader through the replica fetchers
//     (replica_fetcher.go), one fetch session per leader node;
//   - a leader serves its followers' fetches (follower_fetch.go), asks the
//     controller to change its ISR through the AlterPartition sender
//     (alter_partition_sender.go), and checks every half
//     replica.lag.time.max.ms whether a follower fell behind
//     (scheduleISRShrinkCheck);
//   - brokerReplication answers what a partition asks of the node: where
//     to send an ISR proposal, and what the metadata says of a broker.

import (
	"sluice/core/replica"
)

// brokerReplication is one partition's replica.Replication.
type brokerReplication struct {
	b   *Broker
	key partitionKey
}

// ProposeISR queues the proposal for the active controller.
func (r brokerReplication) ProposeISR(p *replica.Partition, proposal replica.ISRProposal) {
	r.b.alterPartitions.submit(r.key, p, proposal)
}

// Broker reports a broker's registered epoch and whether it is unfenced,
// from this node's image.
func (r brokerReplication) Broker(id int32) (int64, bool) {
	registered, ok := r.b.image.Brokers[id]
	if !ok {
		return -1, false
	}
	return registered.Epoch, !registered.Fenced
}

// scheduleISRShrinkCheck runs every leader's ISR shrink check every half
// replica.lag.time.max.ms, as Kafka's isr-expiration task does, so that a
// follower is out of the ISR at most one and a half lag times after it
// last caught up.
func (b *Broker) scheduleISRShrinkCheck() {
	b.isrShrinkTimer = b.w.Clock.AfterFunc(b.config.ReplicaLagTimeMax/2, func() {
		if b.stopped {
			return
		}
		for _, key := range b.sortedPartitionKeys() {
			b.partitions[key].MaybeShrinkISR()
		}
		b.forgetExpiredDepositions()
		b.scheduleISRShrinkCheck()
	})
}
