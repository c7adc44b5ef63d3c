package simclient

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"sluice/core/batch"
	"sluice/core/replica"
	"sluice/jepsen/history"
	"sluice/node/codecs"
	"sluice/sim/simdisk"
)

// A batch of several records is one send: retried whole after a timeout,
// deduplicated whole by the broker, acknowledged at its first offset, and
// recorded with each record at its own consecutive offset; compressed, the
// broker keeps and serves it whole and the reader decompresses it.
func TestBatchesOfSeveralRecordsAreWrittenOnceInEveryCodec(t *testing.T) {
	for codec := batch.CompressionNone; codec <= batch.CompressionZstd; codec++ {
		t.Run(batch.CodecName(codec), func(t *testing.T) {
			c := newCluster(t, 3, slowSync)
			c.createTopic()
			p := NewProducer(c.client("p1", shortTimeout), ProducerConfig{Acks: -1, Idempotent: true, Compression: codec}, c.recorder, c.processes)
			var results []SendResult
			var want []string
			for i, size := range []int{3, 1, 4} {
				var records []KeyValue
				for j := range size {
					value := fmt.Sprintf("b%d-%d", i, j)
					records = append(records, KeyValue{Key: "k", Value: value})
					want = append(want, value)
				}
				if err := p.SendBatch(tp(0), records, func(r SendResult) { results = append(results, r) }); err != nil {
					t.Fatal(err)
				}
				c.runUntil(time.Minute, "the send", func() bool { return len(results) == i+1 })
			}
			for i, first := range []int64{0, 3, 4} {
				if results[i].Type != history.OK || results[i].Offset != first {
					t.Fatalf("send %d: %+v, want ok at %d", i, results[i], first)
				}
			}
			if p.Stats().Retries == 0 {
				t.Fatalf("no retry happened (stats %+v); the test no longer exercises deduplication of a whole batch", p.Stats())
			}
			var acknowledged []int64
			for _, op := range completions(c.recorder.History(), history.FuncSend) {
				for _, s := range op.Sends {
					acknowledged = append(acknowledged, s.Offset)
				}
			}
			if !slices.Equal(acknowledged, []int64{0, 1, 2, 3, 4, 5, 6, 7}) {
				t.Fatalf("recorded offsets %v, want each record at its own, 0 to 7", acknowledged)
			}
			if got := polledValues(c.drain("reader"), tp(0)); !slices.Equal(got, want) {
				t.Fatalf("partition 0 holds %q, want %q", got, want)
			}
		})
	}
}

// A consumer whose position lies inside a batch gets the whole batch and
// keeps only the records at and after its position, compressed or not.
func TestDecodeRecordsStartsInsideACompressedBatch(t *testing.T) {
	plain := batch.Build(batch.Spec{
		BaseOffset: 10, ProducerID: batch.NoProducerID,
		Records: []batch.Record{{Value: []byte("a")}, {Value: []byte("b")}, {Value: []byte("c")}},
	})
	c := &Client{codecSet: codecs.New()}
	for codec := batch.CompressionGzip; codec <= batch.CompressionZstd; codec++ {
		compressed := compressBatch(c.codecs(), codec, plain)
		if h, err := batch.Parse(compressed); err != nil || h.Compression() != codec || h.RecordCount != 3 {
			t.Fatalf("%s: compressed header %+v, %v", batch.CodecName(codec), h, err)
		}
		records, next, err := decodeRecords(c, nil, compressed, 11)
		if err != nil || next != 13 || len(records) != 2 || records[0] != (history.Record{Offset: 11, Value: "b"}) || records[1].Offset != 12 {
			t.Fatalf("%s: from 11: %+v next %d err %v, want b and c at 11 and 12, next 13", batch.CodecName(codec), records, next, err)
		}
	}
}

// A send carries 1 to batchRecordsMax records; anything else is refused
// at once, with nothing recorded.
func TestSendBatchRefusesAnEmptyOrOversizedBatch(t *testing.T) {
	c := newCluster(t, 3, simdisk.Faults{})
	c.createTopic()
	p := NewProducer(c.client("p1"), ProducerConfig{Acks: -1}, c.recorder, c.processes)
	for _, size := range []int{0, batchRecordsMax + 1} {
		records := make([]KeyValue, size)
		for i := range records {
			records[i] = KeyValue{Key: "k", Value: fmt.Sprintf("v%d-%d", size, i)}
		}
		if err := p.SendBatch(tp(0), records, func(SendResult) { t.Fatal("a refused send finished") }); err == nil {
			t.Fatalf("a batch of %d records was taken", size)
		}
	}
	if n := c.recorder.Len(); n != 0 {
		t.Fatalf("%d operations recorded for refused sends", n)
	}
}

// sendInFlight hands p count batches of two records for partition 0 at
// once and runs until every one is finished.
func sendInFlight(t *testing.T, c *cluster, p *Producer, count int) ([]SendResult, []string) {
	t.Helper()
	var results []SendResult
	var want []string
	for i := range count {
		records := []KeyValue{{Key: "k", Value: fmt.Sprintf("f%d-a", i)}, {Key: "k", Value: fmt.Sprintf("f%d-b", i)}}
		want = append(want, records[0].Value, records[1].Value)
		if err := p.SendBatch(tp(0), records, func(r SendResult) { results = append(results, r) }); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if err := p.SendBatch(tp(0), []KeyValue{{Key: "k", Value: "one too many"}}, nil); !errors.Is(err, ErrLaneBusy) {
		t.Fatalf("a send beyond the window: %v, want ErrLaneBusy", err)
	}
	c.runUntil(time.Minute, "the sends", func() bool { return len(results) == count })
	return results, want
}

// Five batches in flight to one partition, every attempt timed out after
// the broker appended it (fsyncs outlast the request timeout): the
// producer retries them in sequence order, the broker answers each retry
// from its window of the last five batches, and each record is written
// once, in order. With the window cut to the last batch (the canary), the
// earlier ones are appended again.
func TestBatchesInFlightAreRetriedInOrderAndWrittenOnce(t *testing.T) {
	c := newCluster(t, 3, slowSync)
	c.createTopic()
	p := NewProducer(c.client("p1", shortTimeout), ProducerConfig{Acks: -1, Idempotent: true, InFlightMax: 5}, c.recorder, c.processes)
	results, want := sendInFlight(t, c, p, 5)
	for i, r := range results {
		if r.Type != history.OK {
			t.Fatalf("send %d: %+v, want ok", i, r)
		}
	}
	if p.Stats().Retries < 5 {
		t.Fatalf("%d retries (stats %+v): the test no longer retries batches behind appended ones", p.Stats().Retries, p.Stats())
	}
	if got := polledValues(c.drain("reader"), tp(0)); !slices.Equal(got, want) {
		t.Fatalf("partition 0 holds %q, want %q", got, want)
	}

	planted := newCluster(t, 3, slowSync, withCanaries(replica.CanaryDuplicateWindowOfOne))
	planted.createTopic()
	p = NewProducer(planted.client("p1", shortTimeout), ProducerConfig{Acks: -1, Idempotent: true, InFlightMax: 5}, planted.recorder, planted.processes)
	sendInFlight(t, planted, p, 5)
	if got := polledValues(planted.drain("reader"), tp(0)); len(got) <= len(want) {
		t.Fatalf("with the window cut to one batch the partition holds %q; retries of earlier batches should be appended again", got)
	}
}
