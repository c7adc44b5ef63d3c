package batch

import (
	"bytes"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A batch with records removed the way compaction removes them: same base
// offset, timestamps and last offset delta, the kept records copied byte
// for byte. kmsg reads it, ValidateCompacted accepts it, Validate does not.
func TestRebuiltBatchKeepsOffsetsAndReadsWithKmsg(t *testing.T) {
	original := Build(Spec{
		BaseOffset: 100, LeaderEpoch: 4, BaseTimestamp: 1_000, ProducerID: 9, ProducerEpoch: 2, BaseSequence: 50,
		Records: []Record{
			{Key: []byte("a"), Value: []byte("1")},
			{Key: []byte("b"), Value: []byte("2"), TimestampDelta: 3},
			{Key: []byte("a"), Value: nil, TimestampDelta: 5},
			{Key: []byte("c"), Value: []byte("3"), TimestampDelta: 9},
		},
	})
	h, err := Validate(original)
	if err != nil {
		t.Fatal(err)
	}
	section, err := RecordsSection(original)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := SplitRecords(section, h.RecordCount)
	if err != nil || len(raw) != 4 || string(raw[1].Key) != "b" || raw[2].Value != nil || raw[3].OffsetDelta != 3 {
		t.Fatalf("SplitRecords: %+v, %v", raw, err)
	}
	kept := append(append([]byte{}, raw[1].Encoded...), raw[2].Encoded...)
	rebuiltHeader := h
	rebuiltHeader.MaxTimestamp = h.BaseTimestamp + 5
	rebuilt := Rebuild(rebuiltHeader, kept, 2)

	if _, err := Validate(rebuilt); !errors.Is(err, ErrRecordCount) {
		t.Fatalf("Validate accepted a batch with fewer records than offsets: %v", err)
	}
	got, err := ValidateCompacted(rebuilt)
	if err != nil || got.BaseOffset != 100 || got.LastOffset() != 103 || got.RecordCount != 2 ||
		got.LastSequence() != h.LastSequence() || got.MaxTimestamp != 1_005 || got.LeaderEpoch != 4 {
		t.Fatalf("ValidateCompacted: %+v, %v", got, err)
	}
	var kb kmsg.RecordBatch
	if err := kb.ReadFrom(rebuilt); err != nil || kb.NumRecords != 2 || kb.LastOffsetDelta != 3 || kb.FirstOffset != 100 {
		t.Fatalf("kmsg: %+v, %v", kb, err)
	}
	records, err := Records(rebuilt)
	if err != nil || len(records) != 2 || records[0].OffsetDelta != 1 || records[1].OffsetDelta != 2 ||
		string(records[0].Value) != "2" || records[1].Value != nil || records[1].TimestampDelta != 5 {
		t.Fatalf("Records of the rebuilt batch: %+v, %v", records, err)
	}

	empty := Empty(h)
	e, err := ValidateCompacted(empty)
	if err != nil || e.RecordCount != 0 || e.LastOffset() != 103 || e.BaseSequence != 50 || e.LastSequence() != 53 ||
		e.BaseTimestamp != h.MaxTimestamp || e.Compression() != CompressionNone || len(empty) != HeaderSize {
		t.Fatalf("Empty: %+v, %v (%d bytes)", e, err, len(empty))
	}
	if err := kb.ReadFrom(empty); err != nil || kb.NumRecords != 0 {
		t.Fatalf("kmsg on the empty batch: %v", err)
	}

	// More records than offsets, a negative count, a flipped bit: refused.
	tooMany := Rebuild(rebuiltHeader, kept, 5)
	if _, err := ValidateCompacted(tooMany); !errors.Is(err, ErrRecordCount) {
		t.Fatalf("5 records in 4 offsets: %v", err)
	}
	damaged := bytes.Clone(rebuilt)
	damaged[len(damaged)-1] ^= 1
	if _, err := ValidateCompacted(damaged); !errors.Is(err, ErrCRC) {
		t.Fatalf("flipped bit: %v", err)
	}
	if _, err := SplitRecords(section[:len(section)-1], h.RecordCount); err == nil {
		t.Fatalf("SplitRecords of a cut section succeeded")
	}
}
