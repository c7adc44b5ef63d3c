package controller

import (
	"github.com/twmb/franz-go/pkg/kerr"
)

// checkManualReplicas validates the replica list a request gives for one
// partition (CreateTopics' ReplicaAssignment, CreatePartitions'
// Assignment) with Kafka's rules, and returns the partition's ISR: its
// unfenced replicas, in the order given, so that the first becomes leader.
// replicationFactor is the replica count every partition of the topic must
// have, or 0 when this partition sets it.
func (c *Controller) checkManualReplicas(partition int32, replicas []int32, replicationFactor int) ([]int32, *failure) {
	if len(replicas) == 0 {
		return nil, fail(kerr.InvalidReplicaAssignment, "the manual assignment of partition %d has no replicas", partition)
	}
	var isr []int32
	for i, id := range replicas {
		broker, registered := c.image.Brokers[id]
		if !registered {
			return nil, fail(kerr.InvalidReplicaAssignment,
				"the manual assignment of partition %d includes broker %d, but no such broker is registered", partition, id)
		}
		for _, earlier := range replicas[:i] {
			if earlier == id {
				return nil, fail(kerr.InvalidReplicaAssignment,
					"the manual assignment of partition %d includes broker %d more than once", partition, id)
			}
		}
		if !broker.Fenced {
			isr = append(isr, id)
		}
	}
	if replicationFactor > 0 && len(replicas) != replicationFactor {
		return nil, fail(kerr.InvalidReplicaAssignment,
			"the manual assignment of partition %d has %d replica(s), but the topic's other partitions have %d",
			partition, len(replicas), replicationFactor)
	}
	if len(isr) == 0 {
		return nil, fail(kerr.InvalidReplicaAssignment,
			"all brokers in the manual assignment of partition %d are fenced", partition)
	}
	return isr, nil
}
