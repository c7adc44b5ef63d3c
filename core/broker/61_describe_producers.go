package broker

// DescribeProducers (key 61), version 0 (KIP-664).
//
// For each partition, the idempotent producers its leader keeps state of
// (core/producer): id, epoch, the last sequence and the last batch's max
// timestamp, what kafka-transactions.sh describe-producers and kadm show
// when a producer is fenced or refused as out of order. Only the leader
// answers (NOT_LEADER_OR_FOLLOWER elsewhere, UNKNOWN_TOPIC_OR_PARTITION
// for a partition the metadata lacks). Sluice has no transactions, so
// every producer has coordinator epoch -1 and no open transaction (-1),
// as Kafka reports a non-transactional producer.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/replica"
)

func init() {
	registerAPI(&api{key: 61, advertisedMin: 0, honouredMin: 0, max: 0, handle: (*Broker).handleDescribeProducers})
}

func (b *Broker) handleDescribeProducers(x *exchange) {
	req := x.request.Body.(*kmsg.DescribeProducersRequest)
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewDescribeProducersResponseTopic()
		rt.Topic = t.Topic
		for _, index := range t.Partitions {
			answer := kmsg.NewDescribeProducersResponseTopicPartition()
			answer.Partition = index
			p, err := b.leaderPartition(partitionKey{topic: t.Topic, partition: index})
			if err == nil {
				answer.ActiveProducers, err = activeProducers(p)
			}
			answer.ErrorCode = errorCode(err)
			rt.Partitions = append(rt.Partitions, answer)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	x.respond(resp)
}

// activeProducers is one partition's answer.
func activeProducers(p *replica.Partition) ([]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, error) {
	entries, err := p.ActiveProducers()
	if err != nil {
		return nil, err
	}
	active := make([]kmsg.DescribeProducersResponseTopicPartitionActiveProducer, 0, len(entries))
	for _, e := range entries {
		a := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
		a.ProducerID, a.ProducerEpoch, a.CoordinatorEpoch = e.ProducerID, int32(e.Epoch), -1
		if n := len(e.Batches); n > 0 {
			a.LastSequence, a.LastTimestamp = e.Batches[n-1].LastSequence, e.Batches[n-1].MaxTimestamp
		}
		active = append(active, a)
	}
	return active, nil
}
