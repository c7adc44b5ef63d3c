package broker

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/core/batch"
	"sluice/core/metadata"
	"sluice/node/codecs"
)

// A topic's compression.type other than "producer" has the leader write
// every produced batch in that codec, as Kafka's LogValidator does:
// recompressed when produced in another, decompressed for "uncompressed",
// left alone when it already is. The records, offsets and producer fields
// are the produced ones. The rewritten batch is held to max.message.bytes.
func TestCompressionTypeRewritesProducedBatches(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("lz4", 1, metadata.ConfigCompressionType, "lz4")
	c.createTopic("plain", 1, metadata.ConfigCompressionType, "uncompressed")
	c.createTopic("as-produced", 1)
	now := n.machine.Clock.Now().UnixMilli()
	plain := batch.Build(batch.Spec{BaseTimestamp: now, ProducerID: batch.NoProducerID,
		Records: []batch.Record{{Value: []byte("a")}, {Key: []byte("k"), Value: []byte("b")}}})
	gzipped, err := batch.Compress(plain, batch.CompressionGzip, codecs.New().Compress)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		topic    string
		produced []byte
		want     int // the codec stored
	}{
		{"lz4", plain, batch.CompressionLZ4},
		{"lz4", gzipped, batch.CompressionLZ4},
		{"plain", gzipped, batch.CompressionNone},
		{"as-produced", gzipped, batch.CompressionGzip},
	} {
		if _, code := c.produceBatch(tc.topic, 0, tc.produced); code != 0 {
			t.Fatalf("%s: produce: %v", tc.topic, kerr.ErrorForCode(code))
		}
	}
	for topic, want := range map[string][]int{
		"lz4":         {batch.CompressionLZ4, batch.CompressionLZ4},
		"plain":       {batch.CompressionNone},
		"as-produced": {batch.CompressionGzip},
	} {
		stored := storedBatches(t, c, topic)
		if len(stored) != len(want) {
			t.Fatalf("%s: %d batches stored, want %d", topic, len(stored), len(want))
		}
		for i, b := range stored {
			h, err := batch.Validate(b)
			if err != nil {
				t.Fatalf("%s: batch %d: %v", topic, i, err)
			}
			if h.Compression() != want[i] || h.BaseOffset != int64(2*i) || h.RecordCount != 2 || h.MaxTimestamp != now {
				t.Fatalf("%s: batch %d is %+v, want codec %d at offset %d with 2 records", topic, i, h, want[i], 2*i)
			}
			if got := recordValues(t, b, h); !slices.Equal(got, []string{"a", "b"}) {
				t.Fatalf("%s: batch %d holds %v, want [a b]", topic, i, got)
			}
		}
	}

	// Rewritten larger than max.message.bytes: refused, as Kafka
	// re-validates a batch whose size changed.
	c.createTopic("small", 1, metadata.ConfigCompressionType, "uncompressed", metadata.ConfigMaxMessageBytes, "200")
	big := batch.Build(batch.Spec{BaseTimestamp: now, ProducerID: batch.NoProducerID,
		Records: []batch.Record{{Value: make([]byte, 1000)}}})
	squeezed, err := batch.Compress(big, batch.CompressionZstd, codecs.New().Compress)
	if err != nil {
		t.Fatal(err)
	}
	if len(squeezed) > 200 {
		t.Fatalf("the zstd batch is %d bytes; the test wants it under 200", len(squeezed))
	}
	_, code := c.produceBatch("small", 0, squeezed)
	requireError(t, "rewritten past max.message.bytes", code, nil, kerr.MessageTooLarge)
}

// storedBatches fetches every batch of partition 0, as stored.
func storedBatches(t *testing.T, c *testClient, topic string) [][]byte {
	t.Helper()
	answer := c.fetchAnswer(topic, 0, 0)
	requireNoError(t, "fetch "+topic, answer.ErrorCode, nil)
	var stored [][]byte
	s := batch.Scanner{Buf: answer.RecordBatches}
	for s.Next() {
		stored = append(stored, s.Batch())
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	return stored
}

// recordValues decompresses a batch if need be and lists its values.
func recordValues(t *testing.T, b []byte, h batch.Header) []string {
	t.Helper()
	section, err := batch.RecordsSection(b)
	if err != nil {
		t.Fatal(err)
	}
	if h.Compression() != batch.CompressionNone {
		if section, err = codecs.New().Decompress(h.Compression(), section, 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := batch.SplitRecords(section, h.RecordCount)
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	for _, r := range raw {
		values = append(values, string(r.Value))
	}
	return values
}
