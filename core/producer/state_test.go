package producer

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"sluice/core/batch"
)

func header(producerID int64, epoch int16, firstSequence int32, records int32, baseOffset int64) batch.Header {
	return batch.Header{
		BaseOffset: baseOffset, ProducerID: producerID, ProducerEpoch: epoch,
		BaseSequence: firstSequence, LastOffsetDelta: records - 1, RecordCount: records,
	}
}

func TestSequencesDuplicatesAndFencing(t *testing.T) {
	s := NewState()
	steps := []struct {
		name    string
		h       batch.Header
		verdict Verdict
	}{
		{"first batch of an unknown producer", header(1, 0, 0, 3, 0), Append},
		{"next in sequence", header(1, 0, 3, 2, 3), Append},
		{"retry of the first batch", header(1, 0, 0, 3, 99), Duplicate},
		{"gap in sequence", header(1, 0, 9, 1, 99), OutOfOrder},
		{"older epoch", header(1, -1+0, 5, 1, 99), StaleEpoch},
		{"new epoch not at zero", header(1, 1, 5, 1, 99), OutOfOrder},
		{"new epoch at zero", header(1, 1, 0, 1, 5), Append},
		{"old epoch after bump", header(1, 0, 5, 1, 99), StaleEpoch},
		{"non-idempotent batch", header(batch.NoProducerID, 0, 0, 1, 6), Append},
		{"unknown producer mid-sequence (KIP-360)", header(2, 0, 42, 1, 7), Append},
	}
	for _, step := range steps {
		d := s.Check(step.h)
		if d.Verdict != step.verdict {
			t.Fatalf("%s: verdict %d, want %d (%s)", step.name, d.Verdict, step.verdict, d.Reason)
		}
		if d.Verdict == Append {
			s.Record(step.h, 1000)
		}
		if step.name == "retry of the first batch" && (d.Original.FirstOffset != 0 || d.Original.LastOffset != 2) {
			t.Fatalf("duplicate answered with %+v, want offsets 0-2", d.Original)
		}
	}
}

func TestOnlyFiveBatchesRemembered(t *testing.T) {
	s := NewState()
	for i := int32(0); i < 7; i++ {
		h := header(1, 0, i, 1, int64(i))
		if d := s.Check(h); d.Verdict != Append {
			t.Fatalf("batch %d: %+v", i, d)
		}
		s.Record(h, 0)
	}
	if d := s.Check(header(1, 0, 2, 1, 0)); d.Verdict != Duplicate || d.Latest {
		t.Fatalf("sequence 2 is among the last five, not the latest: %+v", d)
	}
	if d := s.Check(header(1, 0, 6, 1, 0)); d.Verdict != Duplicate || !d.Latest || d.Original.FirstOffset != 6 {
		t.Fatalf("sequence 6 is the latest batch, at offset 6: %+v", d)
	}
	if d := s.Check(header(1, 0, 1, 1, 0)); d.Verdict != OutOfOrder {
		t.Fatalf("sequence 1 is beyond the window: %+v", d)
	}
}

func TestSequenceWrapsAtMaxInt32(t *testing.T) {
	s := NewState()
	h := header(1, 0, 1<<31-2, 2, 0) // sequences MaxInt32-1, MaxInt32
	s.Record(h, 0)
	if d := s.Check(header(1, 0, 0, 1, 2)); d.Verdict != Append {
		t.Fatalf("sequence after MaxInt32 must be 0: %+v", d)
	}
}

func TestSnapshotRoundTripAndCorruption(t *testing.T) {
	s := NewState()
	for i := int32(0); i < 8; i++ {
		s.Record(header(int64(i%3+1), int16(i/4), i, 2, int64(i)*2), int64(i))
	}
	b := s.EncodeSnapshot(16)
	got, offset, err := DecodeSnapshot(b)
	if err != nil || offset != 16 {
		t.Fatalf("decode: %v offset %d", err, offset)
	}
	if diff := cmp.Diff(s.Entries(), got.Entries()); diff != "" {
		t.Fatalf("round trip differs: %s", diff)
	}
	b[10] ^= 1
	if _, _, err := DecodeSnapshot(b); err == nil {
		t.Fatalf("corrupt snapshot accepted")
	}
	if _, _, err := DecodeSnapshot(b[:len(b)-7]); err == nil {
		t.Fatalf("torn snapshot accepted")
	}
}

func TestExpire(t *testing.T) {
	s := NewState()
	s.Record(header(1, 0, 0, 1, 0), 100)
	s.Record(header(2, 0, 0, 1, 1), 200)
	if n := s.Expire(150); n != 1 || s.Len() != 1 || s.Entries()[0].ProducerID != 2 {
		t.Fatalf("expire: forgot %d, left %+v", n, s.Entries())
	}
}
