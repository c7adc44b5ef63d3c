package batch

import "fmt"

// CompressFunc compresses a records section with a codec, appending to dst
// (core.Codecs.Compress has this shape; this package cannot import core).
type CompressFunc func(codec int, dst, src []byte) ([]byte, error)

// Compress returns b, one whole uncompressed batch, with its records
// section compressed by codec and its attributes saying so, as a producer
// with compression.type set sends it. Offsets, timestamps, producer fields
// and record count are b's.
func Compress(b []byte, codec int, compress CompressFunc) ([]byte, error) {
	h, err := Parse(b)
	if err != nil {
		return nil, err
	}
	if h.Size() > len(b) {
		return nil, ErrShort
	}
	if h.Compression() != CompressionNone {
		return nil, fmt.Errorf("batch: compressing a batch already compressed with codec %d", h.Compression())
	}
	if codec <= CompressionNone || codec > CompressionZstd {
		return nil, fmt.Errorf("batch: no codec %d", codec)
	}
	section, err := compress(codec, nil, b[HeaderSize:h.Size()])
	if err != nil {
		return nil, err
	}
	h.Attributes = h.Attributes&^CompressionMask | int16(codec)
	return Rebuild(h, section, h.RecordCount), nil
}

// codecNames are Kafka's names for the codecs (compression.type), by
// codec.
var codecNames = [...]string{CompressionNone: "none", CompressionGzip: "gzip", CompressionSnappy: "snappy", CompressionLZ4: "lz4", CompressionZstd: "zstd"}

// CodecName is Kafka's name for codec, or "" for none of Kafka's.
func CodecName(codec int) string {
	if codec < 0 || codec >= len(codecNames) {
		return ""
	}
	return codecNames[codec]
}

// CodecNamed is the codec Kafka calls name, if there is one.
func CodecNamed(name string) (int, bool) {
	for codec, n := range codecNames {
		if n == name {
			return codec, true
		}
	}
	return 0, false
}
