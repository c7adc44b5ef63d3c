package batch

import (
	"bytes"
	"testing"
)

// reversing stands in for a codec: Compress must hand it the records
// section and rebuild the batch around what it returns.
func reversing(codec int, dst, src []byte) ([]byte, error) {
	for i := len(src) - 1; i >= 0; i-- {
		dst = append(dst, src[i])
	}
	return dst, nil
}

func TestCompressRebuildsTheBatchAroundTheCompressedSection(t *testing.T) {
	plain := Build(Spec{BaseOffset: 7, ProducerID: 3, ProducerEpoch: 1, BaseSequence: 9, BaseTimestamp: 1000,
		Records: []Record{{Key: []byte("a"), Value: []byte("1")}, {Key: []byte("b"), Value: []byte("2")}}})
	compressed, err := Compress(plain, CompressionLZ4, reversing)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Parse(compressed)
	if err != nil || !CheckCRC(compressed) {
		t.Fatalf("compressed batch: %v, CRC ok %v", err, CheckCRC(compressed))
	}
	p, _ := Parse(plain)
	if h.Compression() != CompressionLZ4 || h.RecordCount != 2 || h.BaseOffset != 7 || h.ProducerID != 3 || h.BaseSequence != 9 || h.MaxTimestamp != p.MaxTimestamp {
		t.Fatalf("header %+v; want lz4, 2 records and the plain batch's fields %+v", h, p)
	}
	section, _ := reversing(0, nil, plain[HeaderSize:])
	if !bytes.Equal(compressed[HeaderSize:], section) {
		t.Fatalf("the records section is not the codec's output")
	}
	if _, err := Compress(compressed, CompressionGzip, reversing); err == nil {
		t.Fatalf("a compressed batch compressed again")
	}
	if _, err := Compress(plain, 5, reversing); err == nil {
		t.Fatalf("codec 5 accepted")
	}
	if _, err := Compress(plain[:len(plain)-1], CompressionGzip, reversing); err == nil {
		t.Fatalf("a cut batch compressed")
	}
}

func TestCodecNamesAreKafkas(t *testing.T) {
	for codec, name := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		if got := CodecName(codec); got != name {
			t.Errorf("CodecName(%d) = %q, want %q", codec, got, name)
		}
		if got, ok := CodecNamed(name); !ok || got != codec {
			t.Errorf("CodecNamed(%q) = %d, %v", name, got, ok)
		}
	}
	if CodecName(5) != "" || CodecName(-1) != "" {
		t.Errorf("a name for a codec Kafka does not have")
	}
	if _, ok := CodecNamed("brotli"); ok {
		t.Errorf("brotli named")
	}
}
