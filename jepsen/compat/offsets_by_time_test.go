package compat

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestOffsetsByTimestampAreExactInEveryCodec: ten records a second apart
// in one batch, in each codec, against the real binary. ListOffsets by a
// timestamp between two records answers the later record's offset, and by
// max timestamp (-3, KIP-734) the newest record's, inside compressed
// batches too, as Kafka answers: a consumer seeking by time starts at the
// record, not at its batch.
func TestOffsetsByTimestampAreExactInEveryCodec(t *testing.T) {
	broker := StartBroker(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	const records = 10
	first := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, codec := range codecsAll {
		t.Run(codec, func(t *testing.T) {
			topic := "by-time-" + codec
			createTopicWithFranzGo(t, broker.Addr(), topic, 1)
			producer := newFranzGoClient(t, broker.Addr(), kgo.ProducerBatchCompression(franzGoCodec(t, codec)),
				kgo.ProducerLinger(time.Second))
			batch := make([]*kgo.Record, records)
			for i := range batch {
				// Values that compress: kgo sends a batch uncompressed when
				// compression would not make it smaller.
				value := fmt.Appendf(nil, "v%d %s", i, strings.Repeat("compressible ", 20))
				batch[i] = &kgo.Record{Topic: topic, Value: value, Timestamp: first.Add(time.Duration(i) * time.Second)}
			}
			if err := producer.ProduceSync(ctx, batch...).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
			if batch[0].Offset != 0 || batch[records-1].Offset != records-1 {
				t.Fatalf("records at offsets %d-%d, want 0-%d", batch[0].Offset, batch[records-1].Offset, records-1)
			}

			if n, compressed := batchesStored(ctx, t, producer, topic); n != 1 || compressed != (codec != codecNone) {
				t.Fatalf("the records were stored in %d batches, compressed %v; the test needs them in one, compressed as asked", n, compressed)
			}

			admin := kadm.NewClient(newFranzGoClient(t, broker.Addr()))
			between := first.Add(3*time.Second + 500*time.Millisecond).UnixMilli()
			listed, err := admin.ListOffsetsAfterMilli(ctx, between, topic)
			if err != nil {
				t.Fatalf("ListOffsetsAfterMilli: %v", err)
			}
			if o, ok := listed.Lookup(topic, 0); !ok || o.Err != nil || o.Offset != 4 || o.Timestamp != first.Add(4*time.Second).UnixMilli() {
				t.Fatalf("offset after %d: %+v, want record 4 at %d", between, o, first.Add(4*time.Second).UnixMilli())
			}

			req := kmsg.NewPtrListOffsetsRequest()
			req.Version = 7
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Timestamp = -3 // the record with the largest timestamp
			rt.Partitions = append(rt.Partitions, rp)
			req.Topics = append(req.Topics, rt)
			resp, err := req.RequestWith(ctx, producer)
			if err != nil {
				t.Fatalf("ListOffsets -3: %v", err)
			}
			p := resp.Topics[0].Partitions[0]
			if p.ErrorCode != 0 || p.Offset != records-1 || p.Timestamp != first.Add((records-1)*time.Second).UnixMilli() {
				t.Fatalf("max timestamp: offset %d at %d (error %d), want record %d", p.Offset, p.Timestamp, p.ErrorCode, records-1)
			}
		})
	}
}
