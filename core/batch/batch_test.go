package batch

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"
)

func TestBuildDecodesWithKmsg(t *testing.T) {
	spec := Spec{
		BaseOffset:    42,
		LeaderEpoch:   3,
		BaseTimestamp: 1_700_000_000_000,
		ProducerID:    7,
		ProducerEpoch: 1,
		BaseSequence:  10,
		Records: []Record{
			{Key: []byte("k1"), Value: []byte("v1"), Headers: []RecordHeader{{Key: "h", Value: []byte("x")}}},
			{Key: nil, Value: nil, TimestampDelta: 5},
			{Key: []byte(""), Value: bytes.Repeat([]byte("z"), 300)},
		},
	}
	b := Build(spec)
	var kb kmsg.RecordBatch
	if err := kb.ReadFrom(b); err != nil {
		t.Fatalf("kmsg cannot read our batch: %v", err)
	}
	if kb.FirstOffset != 42 || kb.NumRecords != 3 || kb.LastOffsetDelta != 2 || kb.ProducerID != 7 ||
		kb.FirstSequence != 10 || kb.PartitionLeaderEpoch != 3 || kb.MaxTimestamp != spec.BaseTimestamp+5 {
		t.Fatalf("kmsg read a different header: %+v", kb)
	}
	h, err := Validate(b)
	if err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if h.NextOffset() != 45 || h.LastSequence() != 12 {
		t.Fatalf("header arithmetic: next=%d lastSeq=%d", h.NextOffset(), h.LastSequence())
	}
	records, err := Records(b)
	if err != nil {
		t.Fatalf("Records: %v", err)
	}
	if len(records) != 3 || string(records[0].Key) != "k1" || records[1].Key != nil || records[1].Value != nil ||
		records[2].Key == nil || len(records[2].Key) != 0 || len(records[2].Value) != 300 ||
		records[0].Headers[0].Key != "h" || records[1].TimestampDelta != 5 || records[2].OffsetDelta != 2 {
		t.Fatalf("records round trip: %+v", records)
	}
	// Stamping offset and epoch leaves the CRC valid.
	SetBaseOffset(b, 1000)
	SetLeaderEpoch(b, 9)
	if _, err := Validate(b); err != nil {
		t.Fatalf("after stamping: %v", err)
	}
	b[len(b)-1] ^= 1
	if _, err := Validate(b); err != ErrCRC {
		t.Fatalf("flipped bit: got %v, want ErrCRC", err)
	}
}

func TestScannerStopsAtTornAndCorrupt(t *testing.T) {
	one := Build(Spec{ProducerID: NoProducerID, Records: []Record{{Value: []byte("a")}}})
	two := Build(Spec{BaseOffset: 1, ProducerID: NoProducerID, Records: []Record{{Value: []byte("b")}, {Value: []byte("c")}}})
	buf := append(append([]byte{}, one...), two...)

	s := Scanner{Buf: buf[:len(buf)-3], VerifyCRC: true}
	count := 0
	for s.Next() {
		count++
	}
	if count != 1 || s.Err() != ErrTorn || s.Position() != len(one) {
		t.Fatalf("torn: count=%d err=%v pos=%d", count, s.Err(), s.Position())
	}

	corrupt := append([]byte{}, buf...)
	corrupt[len(one)+HeaderSize] ^= 0x40
	s = Scanner{Buf: corrupt, VerifyCRC: true}
	count = 0
	for s.Next() {
		count++
	}
	if count != 1 || s.Err() != ErrCRC || s.Position() != len(one) {
		t.Fatalf("corrupt: count=%d err=%v pos=%d", count, s.Err(), s.Position())
	}

	s = Scanner{Buf: buf, VerifyCRC: true}
	count = 0
	for s.Next() {
		count++
	}
	if count != 2 || s.Err() != nil {
		t.Fatalf("clean: count=%d err=%v", count, s.Err())
	}
}

func TestIncrementSequenceWraps(t *testing.T) {
	if got := IncrementSequence(1<<31-1, 1); got != 0 {
		t.Fatalf("wrap: got %d", got)
	}
	if got := IncrementSequence(1<<31-2, 3); got != 1 {
		t.Fatalf("wrap by 3: got %d", got)
	}
	if got := IncrementSequence(5, 4); got != 9 {
		t.Fatalf("plain: got %d", got)
	}
}

// buildByAppending is Build as it was before it measured batches first:
// each record into a scratch buffer, then its length and the record into
// a buffer that grows. Build must write the very same bytes.
func buildByAppending(spec Spec) []byte {
	b := make([]byte, HeaderSize)
	maxTimestamp := spec.BaseTimestamp
	var record []byte
	for i, r := range spec.Records {
		record = record[:0]
		record = append(record, 0)
		record = binary.AppendVarint(record, r.TimestampDelta)
		record = binary.AppendVarint(record, int64(i))
		record = appendVarBytes(record, r.Key)
		record = appendVarBytes(record, r.Value)
		record = binary.AppendVarint(record, int64(len(r.Headers)))
		for _, h := range r.Headers {
			record = appendVarBytes(record, []byte(h.Key))
			record = appendVarBytes(record, h.Value)
		}
		b = binary.AppendVarint(b, int64(len(record)))
		b = append(b, record...)
		maxTimestamp = max(maxTimestamp, spec.BaseTimestamp+r.TimestampDelta)
	}
	if spec.MaxTimestamp != 0 {
		maxTimestamp = spec.MaxTimestamp
	}
	binary.BigEndian.PutUint64(b[offsetBaseOffset:], uint64(spec.BaseOffset))
	binary.BigEndian.PutUint32(b[offsetBatchLength:], uint32(len(b)-LengthPrefixSize))
	binary.BigEndian.PutUint32(b[offsetLeaderEpoch:], uint32(spec.LeaderEpoch))
	b[offsetMagic] = Magic
	binary.BigEndian.PutUint16(b[offsetAttributes:], uint16(spec.Attributes))
	binary.BigEndian.PutUint32(b[offsetLastOffsetDelta:], uint32(len(spec.Records)-1))
	binary.BigEndian.PutUint64(b[offsetBaseTimestamp:], uint64(spec.BaseTimestamp))
	binary.BigEndian.PutUint64(b[offsetMaxTimestamp:], uint64(maxTimestamp))
	binary.BigEndian.PutUint64(b[offsetProducerID:], uint64(spec.ProducerID))
	binary.BigEndian.PutUint16(b[offsetProducerEpoch:], uint16(spec.ProducerEpoch))
	binary.BigEndian.PutUint32(b[offsetBaseSequence:], uint32(spec.BaseSequence))
	binary.BigEndian.PutUint32(b[offsetRecordCount:], uint32(len(spec.Records)))
	binary.BigEndian.PutUint32(b[offsetCRC:], ComputeCRC(b))
	return b
}

func TestBuildWritesWhatAppendingWrote(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		optionalBytes := rapid.OneOf(rapid.Just([]byte(nil)), rapid.SliceOfN(rapid.Byte(), 0, 200))
		record := rapid.Custom(func(t *rapid.T) Record {
			r := Record{
				TimestampDelta: rapid.OneOf(rapid.Int64Range(-300, 300), rapid.Int64()).Draw(t, "timestamp delta"),
				Key:            optionalBytes.Draw(t, "key"),
				Value:          optionalBytes.Draw(t, "value"),
			}
			for range rapid.IntRange(0, 3).Draw(t, "headers") {
				r.Headers = append(r.Headers, RecordHeader{Key: rapid.String().Draw(t, "header key"), Value: optionalBytes.Draw(t, "header value")})
			}
			return r
		})
		spec := Spec{
			BaseOffset:    rapid.Int64().Draw(t, "base offset"),
			BaseTimestamp: rapid.Int64Range(0, 1<<50).Draw(t, "base timestamp"),
			MaxTimestamp:  rapid.OneOf(rapid.Just(int64(0)), rapid.Int64()).Draw(t, "max timestamp"),
			ProducerID:    NoProducerID,
			Records:       rapid.SliceOfN(record, 1, 300).Draw(t, "records"),
		}
		if got, want := Build(spec), buildByAppending(spec); !bytes.Equal(got, want) {
			t.Fatalf("Build wrote %d bytes, appending %d:\n%x\n%x", len(got), len(want), got, want)
		}
	})
}

func TestVarintSizeMatchesAppendVarint(t *testing.T) {
	values := []int64{0, 1, -1, 63, -64, 64, -65, 1 << 20, -1 << 20, 1<<63 - 1, -1 << 63}
	for shift := range 64 {
		values = append(values, 1<<shift, -(1 << shift), 1<<shift-1, -(1<<shift - 1))
	}
	for _, v := range values {
		if got, want := varintSize(v), len(binary.AppendVarint(nil, v)); got != want {
			t.Fatalf("varintSize(%d) = %d, AppendVarint writes %d", v, got, want)
		}
	}
}
