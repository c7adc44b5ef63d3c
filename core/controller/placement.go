package controller

import (
	"fmt"
	"slices"

	"sluice/core"
	"sluice/core/metadata"
)

// Replica placement: which brokers hold a new partition, and which of them
// leads it. Topic creation and CreatePartitions use it now; reassignment and
// leader election will reuse usableBrokers and the same pattern.

// usableBrokers are the brokers new replicas may go to: registered,
// unfenced and not shutting down, sorted by id.
func (c *Controller) usableBrokers() []int32 {
	var usable []int32
	for _, id := range c.image.BrokerIDs() {
		if !c.image.Brokers[id].Fenced && !c.isShuttingDown(id) {
			usable = append(usable, id)
		}
	}
	return usable
}

// placementSpec describes partitions to place with Kafka's rack-unaware
// assignment (AdminUtils.assignReplicasToBrokersRackUnaware, which KRaft
// keeps for clusters without racks):
//
//   - partition p's first replica, its preferred leader, is
//     brokers[(p + startIndex) % n], so leadership goes round the brokers
//     and each leads an equal share;
//   - the other replicas follow it at distances 1 + (shift + j) % (n - 1),
//     all different and never 0, so no broker holds two replicas of one
//     partition;
//   - shift grows by one each time p wraps round the brokers, so the
//     followers of successive rounds differ and the load of leading one
//     broker's partitions when it fails spreads over the others.
type placementSpec struct {
	brokers           []int32 // usable brokers, sorted
	firstPartition    int32
	count             int32
	replicationFactor int
	startIndex        int
	shift             int
}

// randomPlacement starts the pattern at a random broker with a random
// shift, as Kafka does for a new topic, so topics created one after the
// other do not all put their first leader on the same broker.
func randomPlacement(e core.Entropy, brokers []int32, firstPartition, count int32, replicationFactor int) placementSpec {
	return placementSpec{
		brokers: brokers, firstPartition: firstPartition, count: count, replicationFactor: replicationFactor,
		startIndex: core.RandomIntn(e, len(brokers)),
		shift:      core.RandomIntn(e, len(brokers)),
	}
}

// continuedPlacement places partitions added to an existing topic so that
// they continue its pattern: the start is where its partition 0's
// preferred leader sits among the brokers (as Kafka's CreatePartitions did
// before KRaft), and random if that broker is no longer usable. Partition
// 0 may be being reassigned: its target, not its replicas of the moment
// (the target plus those leaving), is the pattern and the factor.
func continuedPlacement(e core.Entropy, brokers []int32, t *metadata.Topic, count int32) placementSpec {
	first := t.Partitions[0].TargetReplicas()
	start := slices.Index(brokers, first[0])
	if start < 0 {
		return randomPlacement(e, brokers, int32(len(t.Partitions)), count, len(first))
	}
	return placementSpec{
		brokers: brokers, firstPartition: int32(len(t.Partitions)), count: count,
		replicationFactor: len(first), startIndex: start, shift: start,
	}
}

// place returns the replica list of each partition, first replica first.
func (s placementSpec) place() [][]int32 {
	n := len(s.brokers)
	assert(n > 0 && s.replicationFactor >= 1 && s.replicationFactor <= n,
		"placing replication factor %d on %d brokers", s.replicationFactor, n)
	assert(s.startIndex >= 0 && s.startIndex < n && s.shift >= 0, "placement start %d, shift %d on %d brokers", s.startIndex, s.shift, n)
	shift := s.shift
	assignments := make([][]int32, 0, s.count)
	for p := s.firstPartition; p < s.firstPartition+s.count; p++ {
		if p > 0 && int(p)%n == 0 {
			shift++
		}
		first := (int(p) + s.startIndex) % n
		replicas := make([]int32, 0, s.replicationFactor)
		replicas = append(replicas, s.brokers[first])
		for j := 0; j < s.replicationFactor-1; j++ {
			distance := 1 + (shift+j)%(n-1)
			replicas = append(replicas, s.brokers[(first+distance)%n])
		}
		assertDistinct(replicas)
		assignments = append(assignments, replicas)
	}
	return assignments
}

// assertDistinct panics if a replica list names a broker twice: two
// replicas on one broker would count one copy as two.
func assertDistinct(replicas []int32) {
	for i := range replicas {
		for j := i + 1; j < len(replicas); j++ {
			if replicas[i] == replicas[j] {
				violated("replica list %v names broker %d twice", replicas, replicas[i])
			}
		}
	}
}

// newPartitionRecord creates a partition whose leader is the first in-sync
// replica, at leader and partition epoch 0. An automatic placement puts
// every replica in the ISR (all are usable brokers); a manual one only the
// unfenced replicas, as Kafka does.
func newPartitionRecord(topic metadata.TopicID, partition int32, replicas, isr []int32) metadata.Record {
	assert(len(isr) > 0, "partition %d created with an empty ISR", partition)
	return metadata.Record{Partition: &metadata.PartitionRecord{
		TopicID:        topic,
		Partition:      partition,
		Replicas:       slices.Clone(replicas),
		ISR:            slices.Clone(isr),
		Leader:         isr[0],
		LeaderEpoch:    0,
		PartitionEpoch: 0,
	}}
}

// replicationFactorUnreachable is Kafka's message when there are too few
// usable brokers.
func replicationFactorUnreachable(replicationFactor, usable int) string {
	return fmt.Sprintf("unable to replicate the partition %d time(s): the target replication factor of %d cannot be reached because only %d broker(s) are registered and unfenced",
		replicationFactor, replicationFactor, usable)
}
