package compat

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestCompactionLooksInsideCompressedBatches: a compacted topic written
// in compressed batches of many records, as franz-go (snappy by default)
// and most tuned producers write, in each codec. The cleaner must remove
// superseded records from inside them, and a read must still end every
// key at its last value. The real binary once ran without codecs: it
// left every compressed batch as it was, so such a topic never
// compacted, while the simulator, which has them, compacted it.
func TestCompactionLooksInsideCompressedBatches(t *testing.T) {
	broker := StartBroker(t, Options{Settings: []string{"log.retention.check.interval.ms=200"}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*compactionWaitMax)
	defer cancel()
	admin := kadm.NewClient(newFranzGoClient(t, broker.Addr()))
	const keys, rounds = 20, 6
	for _, codec := range codecsAll[1:] {
		t.Run(codec, func(t *testing.T) {
			topic := "compressed-changelog-" + codec
			created, err := admin.CreateTopic(ctx, 1, 1, map[string]*string{
				"cleanup.policy":            kadm.StringPtr("compact"),
				"segment.bytes":             kadm.StringPtr("1024"),
				"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"),
			}, topic)
			if err == nil {
				err = created.Err
			}
			if err != nil {
				t.Fatalf("creating %s: %v", topic, err)
			}
			producer := newFranzGoClient(t, broker.Addr(), kgo.DefaultProduceTopic(topic),
				kgo.ProducerBatchCompression(franzGoCodec(t, codec)), kgo.ProducerLinger(100*time.Millisecond))
			latest := map[string][]byte{}
			produced := 0
			for round := range rounds {
				// One batch of every key per round: values that compress,
				// or kgo would send the batch uncompressed.
				batch := make([]*kgo.Record, keys)
				for i := range batch {
					key := fmt.Sprintf("k%02d", i)
					value := fmt.Appendf(nil, "round%d-%s %s", round, key, strings.Repeat("padding ", 8))
					batch[i] = &kgo.Record{Key: []byte(key), Value: value}
					latest[key] = value
				}
				if err := producer.ProduceSync(ctx, batch...).FirstErr(); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				produced += keys
			}
			if n, compressed := batchesStored(ctx, t, producer, topic); n == 0 || !compressed {
				t.Fatalf("the first of %d batches stored is compressed: %v; the test needs compressed batches", n, compressed)
			}
			read := awaitCompaction(ctx, t, broker.Addr(), admin, topic, produced)
			checkCompactedRead(t, "franz-go", read, latest)
			t.Logf("%d records produced, %d left after compaction", produced, len(read))
		})
	}
}
