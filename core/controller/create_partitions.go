package controller

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

// CreatePartitions answers CreatePartitions (versions 0-3 semantics): each
// topic grows to Count partitions. Each topic is judged on its own:
//
//   - named twice in the request: INVALID_REQUEST;
//   - unknown: UNKNOWN_TOPIC_OR_PARTITION;
//   - Count not above the current count, or above partitionsPerTopicMax:
//     INVALID_PARTITIONS;
//   - a manual Assignment that does not give exactly one replica list per
//     new partition, each with as many distinct, registered replicas as the
//     topic's partition 0 has, at least one unfenced:
//     INVALID_REPLICA_ASSIGNMENT;
//   - without an Assignment, more replicas than unfenced brokers:
//     INVALID_REPLICATION_FACTOR.
//
// An empty Assignment counts as none (Kafka refuses a non-null empty one;
// clients send null). Without one, the new partitions continue the topic's
// placement pattern (placement.go). A request adding more than
// partitionsPerRequestMax partitions in all fails as a whole with
// INVALID_PARTITIONS. ValidateOnly answers as if created and proposes
// nothing. Otherwise the new PartitionRecords of every topic that passes
// are one proposal.
func (c *Controller) CreatePartitions(req *kmsg.CreatePartitionsRequest, done func(*kmsg.CreatePartitionsResponse)) {
	c.submitAdmin(func() ([]metadata.Record, func(*failure)) {
		failures, records := c.planPartitionCreations(req)
		if req.ValidateOnly {
			records = nil
		}
		return records, func(outcome *failure) { done(createPartitionsAnswer(req, failures, outcome)) }
	}, func(f *failure) {
		done(createPartitionsAnswer(req, make([]*failure, len(req.Topics)), f))
	})
}

// planPartitionCreations judges every topic of the request and returns one
// failure per topic (nil for those that grow) and the records.
func (c *Controller) planPartitionCreations(req *kmsg.CreatePartitionsRequest) ([]*failure, []metadata.Record) {
	failures := make([]*failure, len(req.Topics))
	total := int64(0)
	for _, t := range req.Topics {
		if existing, exists := c.image.Topics[t.Topic]; exists && int(t.Count) > len(existing.Partitions) {
			total += int64(int(t.Count) - len(existing.Partitions))
		}
	}
	if total > partitionsPerRequestMax {
		tooMany := fail(kerr.InvalidPartitions, "the request creates %d partitions, more than %d at once", total, partitionsPerRequestMax)
		for i := range failures {
			failures[i] = tooMany
		}
		return failures, nil
	}
	occurrences := map[string]int{}
	for _, t := range req.Topics {
		occurrences[t.Topic]++
	}
	var records []metadata.Record
	for i, t := range req.Topics {
		if occurrences[t.Topic] > 1 {
			failures[i] = fail(kerr.InvalidRequest, "topic %q is named more than once in the request", t.Topic)
			continue
		}
		topicRecords, f := c.planPartitionCreation(t)
		failures[i] = f
		records = append(records, topicRecords...)
	}
	return failures, records
}

// planPartitionCreation judges one topic and returns its new partitions.
func (c *Controller) planPartitionCreation(t kmsg.CreatePartitionsRequestTopic) ([]metadata.Record, *failure) {
	topic, exists := c.image.Topics[t.Topic]
	if !exists {
		return nil, fail(kerr.UnknownTopicOrPartition, "topic %q does not exist", t.Topic)
	}
	current := int32(len(topic.Partitions))
	assert(current > 0, "topic %q has no partitions", t.Topic)
	switch {
	case t.Count == current:
		return nil, fail(kerr.InvalidPartitions, "topic %q already has %d partition(s)", t.Topic, current)
	case t.Count < current:
		return nil, fail(kerr.InvalidPartitions, "topic %q has %d partition(s); %d would not be an increase", t.Topic, current, t.Count)
	case t.Count > partitionsPerTopicMax:
		return nil, fail(kerr.InvalidPartitions, "topic %q would have %d partitions, more than %d", t.Topic, t.Count, partitionsPerTopicMax)
	}
	additional := t.Count - current
	// Partition 0's target: while it is being reassigned its replicas
	// include those leaving.
	replicationFactor := len(topic.Partitions[0].TargetReplicas())
	var assignments, isrs [][]int32
	if len(t.Assignment) > 0 {
		if len(t.Assignment) != int(additional) {
			return nil, fail(kerr.InvalidReplicaAssignment, "%d partition(s) are added, but %d assignment(s) were given",
				additional, len(t.Assignment))
		}
		for i, a := range t.Assignment {
			isr, f := c.checkManualReplicas(current+int32(i), a.Replicas, replicationFactor)
			if f != nil {
				return nil, f
			}
			assignments = append(assignments, a.Replicas)
			isrs = append(isrs, isr)
		}
	} else {
		brokers := c.usableBrokers()
		if replicationFactor > len(brokers) {
			return nil, fail(kerr.InvalidReplicationFactor, "%s", replicationFactorUnreachable(replicationFactor, len(brokers)))
		}
		assignments = continuedPlacement(c.w.Entropy, brokers, topic, additional).place()
		isrs = assignments
	}
	records := make([]metadata.Record, 0, additional)
	for i := range assignments {
		records = append(records, newPartitionRecord(topic.ID, current+int32(i), assignments[i], isrs[i]))
	}
	return records, nil
}

// createPartitionsAnswer builds the answer; outcome is the commit's.
func createPartitionsAnswer(req *kmsg.CreatePartitionsRequest, failures []*failure, outcome *failure) *kmsg.CreatePartitionsResponse {
	resp := req.ResponseKind().(*kmsg.CreatePartitionsResponse)
	for i, t := range req.Topics {
		answer := kmsg.NewCreatePartitionsResponseTopic()
		answer.Topic = t.Topic
		f := failures[i]
		if f == nil {
			f = outcome
		}
		answer.ErrorCode = f.errorCode()
		answer.ErrorMessage = f.messagePointer()
		resp.Topics = append(resp.Topics, answer)
	}
	return resp
}
