package codecs

import (
	"bytes"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"sluice/core/batch"
)

var kafkaCodecs = []struct {
	name  string
	codec int
	kgo   kgo.CompressionCodec
}{
	{"gzip", batch.CompressionGzip, kgo.GzipCompression()},
	{"snappy", batch.CompressionSnappy, kgo.SnappyCompression()},
	{"lz4", batch.CompressionLZ4, kgo.Lz4Compression()},
	{"zstd", batch.CompressionZstd, kgo.ZstdCompression()},
}

func payload() []byte {
	var b []byte
	for i := range 100_000 {
		b = append(b, byte(i%251), byte(i%7), 'k')
	}
	return b
}

// Each codec round-trips, and interoperates with a real Kafka client's
// codecs (franz-go's): a client reads what compaction writes, and
// compaction reads what a client produced.
func TestCodecsRoundTripAndMatchAKafkaClient(t *testing.T) {
	c := New()
	decompressor := kgo.DefaultDecompressor()
	src := payload()
	for _, tc := range kafkaCodecs {
		t.Run(tc.name, func(t *testing.T) {
			compressed, err := c.Compress(tc.codec, []byte("prefix"), src)
			if err != nil || !bytes.HasPrefix(compressed, []byte("prefix")) {
				t.Fatalf("Compress: %v (prefix kept: %v)", err, bytes.HasPrefix(compressed, []byte("prefix")))
			}
			compressed = compressed[len("prefix"):]
			if len(compressed) >= len(src) {
				t.Fatalf("%d bytes compressed to %d", len(src), len(compressed))
			}
			again, err := c.Compress(tc.codec, nil, src)
			if err != nil || !bytes.Equal(again, compressed) {
				t.Fatalf("compressing twice gave different bytes: the simulator needs determinism")
			}
			got, err := c.Decompress(tc.codec, compressed, len(src))
			if err != nil || !bytes.Equal(got, src) {
				t.Fatalf("round trip: %v", err)
			}
			byClient, err := decompressor.Decompress(compressed, kgo.CompressionCodecType(tc.codec))
			if err != nil || !bytes.Equal(byClient, src) {
				t.Fatalf("franz-go cannot read what we wrote: %v", err)
			}
			compressor, err := kgo.DefaultCompressor(tc.kgo)
			if err != nil {
				t.Fatal(err)
			}
			fromClient, codec := compressor.Compress(new(bytes.Buffer), src)
			if int(codec) != tc.codec {
				t.Fatalf("franz-go compressed with codec %d", codec)
			}
			got, err = c.Decompress(tc.codec, fromClient, len(src))
			if err != nil || !bytes.Equal(got, src) {
				t.Fatalf("cannot read what franz-go wrote: %v", err)
			}
			if _, err := c.Decompress(tc.codec, compressed, len(src)-1); !errors.Is(err, ErrTooLarge) {
				t.Fatalf("output beyond sizeMax: got %v, want ErrTooLarge", err)
			}
			if _, err := c.Decompress(tc.codec, compressed[:len(compressed)/2], len(src)); err == nil {
				t.Fatalf("half a compressed payload decompressed without error")
			}
			// The readers are kept and reset: failures leave nothing
			// behind for the next batch.
			if _, err := c.Decompress(tc.codec, []byte("not compressed at all"), len(src)); err == nil {
				t.Fatalf("garbage decompressed without error")
			}
			got, err = c.Decompress(tc.codec, compressed, len(src))
			if err != nil || !bytes.Equal(got, src) {
				t.Fatalf("round trip after failures: %v", err)
			}
		})
	}
	if _, err := c.Decompress(5, nil, 10); !errors.Is(err, ErrUnknownCodec) {
		t.Fatalf("codec 5: %v", err)
	}
	if _, err := c.Compress(0, nil, nil); !errors.Is(err, ErrUnknownCodec) {
		t.Fatalf("codec 0 compress: %v", err)
	}
}
