package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
)

// A produce naming several partitions is answered once, after every
// partition was handled: one whose acknowledgement comes at once (a retry
// of a batch already committed) must not send the answer while the
// partitions after it are still unhandled, which would tell the client
// their batches were written, at no offset, before they were.
func TestAProduceIsAnsweredOnlyOnceEveryPartitionIsHandled(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("t", 2)
	initProducer := kmsg.NewPtrInitProducerIDRequest()
	initProducer.Version = 4
	pid := c.request(initProducer).(*kmsg.InitProducerIDResponse)
	requireNoError(t, "InitProducerId", pid.ErrorCode, nil)
	spec := func(partition int32, sequence int32, value string) kmsg.ProduceRequestTopicPartition {
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = partition
		rp.Records = batch.Build(batch.Spec{
			BaseTimestamp: n.machine.Clock.Now().UnixMilli(), ProducerID: pid.ProducerID, ProducerEpoch: pid.ProducerEpoch,
			BaseSequence: sequence, Records: []batch.Record{{Value: []byte(value)}},
		})
		return rp
	}
	produce := func(partitions ...kmsg.ProduceRequestTopicPartition) []kmsg.ProduceResponseTopicPartition {
		req := kmsg.NewPtrProduceRequest()
		req.Version = 9
		req.Acks = -1
		req.TimeoutMillis = 30_000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "t"
		rt.Partitions = partitions
		req.Topics = append(req.Topics, rt)
		return c.request(req).(*kmsg.ProduceResponse).Topics[0].Partitions
	}
	first := produce(spec(0, 0, "a"))
	requireNoError(t, "first produce", first[0].ErrorCode, nil)
	// The retry of partition 0's batch, committed already, with a new
	// batch for partition 1.
	answers := produce(spec(0, 0, "a"), spec(1, 0, "b"))
	for _, a := range answers {
		requireNoError(t, "produce", a.ErrorCode, nil)
		if a.BaseOffset != 0 {
			t.Fatalf("partition %d answered at offset %d, want 0 (answers %+v)", a.Partition, a.BaseOffset, answers)
		}
	}
	values, code, _ := c.fetch("t", 1, 0)
	requireNoError(t, "fetch", code, nil)
	if len(values) != 1 || values[0] != "b" {
		t.Fatalf("partition 1 holds %v, want [b]", values)
	}
}
