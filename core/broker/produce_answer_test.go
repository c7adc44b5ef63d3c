package broker

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
	"sluice/core/wire"
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

// A produce with acks=0 is never answered; when a partition fails, the
// broker closes the connection instead, as Kafka does, so the client
// learns of it and refreshes its metadata rather than go on sending to a
// broker that drops everything (a leader that moved away, say). Answers
// to the requests before it still go out first.
func TestAProduceWithAcksZeroIsAnsweredOnlyByClosingWhenItFails(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("t", 1)
	acksZero := func(version int16, partition int32, value string) *kmsg.ProduceRequest {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = version, 0, 30_000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "t"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Partition = partition
		rp.Records = batch.Build(batch.Spec{
			BaseTimestamp: n.machine.Clock.Now().UnixMilli(), ProducerID: batch.NoProducerID,
			Records: []batch.Record{{Value: []byte(value)}},
		})
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return req
	}

	// sendUnanswered sends a request the harness must not count as one
	// to be answered.
	sendUnanswered := func(c *testClient, req kmsg.Request) {
		c.correlation++
		c.handler.Frame(wire.AppendRequest(nil, c.correlation, "sluice-test", req))
	}

	// Written, unanswered, and the connection goes on.
	sendUnanswered(c, acksZero(9, 0, "written"))
	if got := c.metadata("t").Topics[0].Partitions; len(got) != 1 {
		t.Fatalf("metadata after an acks=0 produce: %+v", got)
	}
	if len(c.conn.sent) != 2 || c.conn.closed { // CreateTopics' and Metadata's answers
		t.Fatalf("after an acks=0 produce: %d answers, closed %v; want 2, open", len(c.conn.sent), c.conn.closed)
	}
	n.run(100 * time.Millisecond) // the write is synced: the high watermark covers it
	values, code, _ := c.fetch("t", 0, 0)
	requireNoError(t, "fetch", code, nil)
	if len(values) != 1 || values[0] != "written" {
		t.Fatalf("t-0 holds %q, want [written]", values)
	}

	for _, failing := range []struct {
		what    string
		request *kmsg.ProduceRequest
	}{
		{"a partition that does not exist", acksZero(9, 7, "lost")},
		{"a version refused (v2)", acksZero(2, 0, "refused")},
	} {
		c := n.connect()
		before := c.send(kmsg.NewPtrApiVersionsRequest())
		sendUnanswered(c, failing.request)
		n.run(time.Second)
		if !before.answered() {
			t.Fatalf("%s: the request before the failing produce was not answered", failing.what)
		}
		if len(c.conn.sent) != 1 || !c.conn.closed {
			t.Fatalf("%s: %d answers, closed %v; want 1 (the request before), closed", failing.what, len(c.conn.sent), c.conn.closed)
		}
	}
	values, code, _ = c.fetch("t", 0, 0)
	requireNoError(t, "fetch", code, nil)
	if len(values) != 1 || values[0] != "written" {
		t.Fatalf("t-0 holds %q after the failing produces, want [written]", values)
	}
}
