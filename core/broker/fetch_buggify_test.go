package broker

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/sim/kernel"
)

// TestShortFetchWaitAnswersEarlyAndEmpty switches on the BUGGIFY site
// broker-fetch-wait-short: a consumer's fetch at the log end, which would
// wait its whole MaxWait for data, is answered sooner, and the answer is
// well-formed and empty (no error, no records, the right high
// watermark). The consumer fetches again and gets what is produced next.
func TestShortFetchWaitAnswersEarlyAndEmpty(t *testing.T) {
	// Every site on, firing each time it is reached.
	n := newTestNodeWith(t, DefaultConfig(), core.NewBuggify(kernel.NewRand(1, "buggify"), 1, 1))
	c := n.connect()
	c.createTopic("t", 1)
	n.run(settleTime)
	c.produce("t", 0, "a")

	const maxWait = 10 * time.Second
	const fetches = 5
	early := 0
	for range fetches {
		sent := n.kernel.Now()
		resp := c.request(longPoll("t", 0, 1, maxWait)).(*kmsg.FetchResponse)
		waited := time.Duration(n.kernel.Now() - sent)
		if waited > maxWait {
			t.Fatalf("the fetch waited %v, more than its max wait %v", waited, maxWait)
		}
		if waited < maxWait {
			early++
		}
		requireNoError(t, "fetch", resp.ErrorCode, nil)
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("answer has %d topics, want one with one partition", len(resp.Topics))
		}
		p := resp.Topics[0].Partitions[0]
		requireNoError(t, "fetch partition", p.ErrorCode, nil)
		if len(p.RecordBatches) != 0 || p.HighWatermark != 1 || p.Partition != 0 {
			t.Fatalf("early answer: %d bytes of batches, high watermark %d, partition %d; want none, 1, 0", len(p.RecordBatches), p.HighWatermark, p.Partition)
		}
	}
	if early != fetches {
		t.Fatalf("%d of %d fetches were answered before their max wait, want all", early, fetches)
	}

	c.produce("t", 0, "b")
	values, code, _ := c.fetch("t", 0, 1)
	requireNoError(t, "fetch after the produce", code, nil)
	if len(values) != 1 || values[0] != "b" {
		t.Fatalf("fetched %q after the produce, want [b]", values)
	}
}

// longPoll is a consumer's fetch from offset that waits up to maxWait
// for a byte.
func longPoll(topic string, partition int32, offset int64, maxWait time.Duration) *kmsg.FetchRequest {
	req := consumerFetch(topic, partition, offset)
	req.MinBytes = 1
	req.MaxWaitMillis = int32(maxWait.Milliseconds())
	return req
}
