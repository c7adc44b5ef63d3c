package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/core/batch"
	"sluice/core/metadata"
	"sluice/node/codecs"
)

// A batch is stored as produced, so the leader walks its records first:
// a batch whose CRC is right but whose records do not parse or do not
// number 0, 1, 2... would be served to every consumer, at offsets its
// header does not cover. Each is refused with the code Kafka gives, and
// nothing of it is stored. A compressed batch stays opaque (DESIGN §9)
// except on a compacted topic, whose keys must be read: there one that
// does not decompress, or whose records are broken inside, is refused
// too.
func TestProduceRefusesBatchesWhoseRecordsAreBroken(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("orders", 1)
	c.createTopic("compacted", 1, metadata.ConfigCleanupPolicy, "compact")
	now := n.machine.Clock.Now().UnixMilli()
	build := func(values ...string) []byte {
		records := make([]batch.Record, len(values))
		for i, v := range values {
			records[i] = batch.Record{Key: []byte("k"), Value: []byte(v)}
		}
		return batch.Build(batch.Spec{BaseTimestamp: now, ProducerID: batch.NoProducerID, Records: records})
	}
	header := func(b []byte) batch.Header {
		h, err := batch.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	two := build("a", "b")
	h := header(two)
	section := two[batch.HeaderSize:]
	one := build("c")
	// Two records that both say offset delta 0: each parses, the header
	// says 2, but the second would be read at the base offset again.
	sameDelta := append(append([]byte(nil), one[batch.HeaderSize:]...), one[batch.HeaderSize:]...)
	compress := func(codec int, section []byte) []byte {
		compressed, err := codecs.New().Compress(codec, nil, section)
		if err != nil {
			t.Fatal(err)
		}
		g := h
		g.Attributes |= int16(codec)
		return batch.Rebuild(g, compressed, 2)
	}
	gzipped := h
	gzipped.Attributes |= batch.CompressionGzip
	for _, tc := range []struct {
		name  string
		topic string
		batch []byte
		want  *kerr.Error
	}{
		{"a byte after the last record", "orders", batch.Rebuild(h, append(append([]byte(nil), section...), 0), 2), kerr.InvalidRecord},
		{"the last record cut short", "orders", batch.Rebuild(h, section[:len(section)-1], 2), kerr.InvalidRecord},
		{"one record where the header says two", "orders", batch.Rebuild(h, one[batch.HeaderSize:], 2), kerr.InvalidRecord},
		{"two records at offset delta 0", "orders", batch.Rebuild(h, sameDelta, 2), kerr.InvalidRecord},
		{"the same, compressed, on a compacted topic", "compacted", compress(batch.CompressionZstd, sameDelta), kerr.InvalidRecord},
		{"gzip that is not gzip, on a compacted topic", "compacted", batch.Rebuild(gzipped, []byte("not gzip at all"), 2), kerr.CorruptMessage},
	} {
		if !batch.CheckCRC(tc.batch) {
			t.Fatalf("%s: the test batch's CRC is wrong; it would be refused for that", tc.name)
		}
		_, code := c.produceBatch(tc.topic, 0, tc.batch)
		requireError(t, tc.name, code, nil, tc.want)
	}
	for _, topic := range []string{"orders", "compacted"} {
		if offset, code := c.produceBatch(topic, 0, compress(batch.CompressionLZ4, section)); code != 0 || offset != 0 {
			t.Fatalf("%s: a well-formed compressed batch: offset %d, code %d", topic, offset, code)
		}
		if offset := c.produce(topic, 0, "d"); offset != 2 {
			t.Fatalf("%s: the next batch went to offset %d, want 2: a refused batch took offsets", topic, offset)
		}
	}
}
