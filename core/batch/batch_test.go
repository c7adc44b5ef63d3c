package batch

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
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
