package broker

import (
	"bytes"
	"slices"
	"testing"

	"sluice/core/batch"
)

func TestConsumersGetNoEmptyBatchThatAnotherFollows(t *testing.T) {
	offset := int64(0)
	build := func(values ...string) []byte {
		spec := batch.Spec{BaseTimestamp: 1, ProducerID: batch.NoProducerID}
		for _, v := range values {
			spec.Records = append(spec.Records, batch.Record{Key: []byte(v), Value: []byte(v)})
		}
		b := batch.Build(spec)
		batch.SetBaseOffset(b, offset)
		offset += int64(len(values))
		return b
	}
	emptied := func(values ...string) []byte {
		h, err := batch.Parse(build(values...))
		if err != nil {
			t.Fatal(err)
		}
		return batch.Empty(h)
	}
	a, e1, e2, b, e3 := build("a"), emptied("x", "y"), emptied("z"), build("b", "c"), emptied("w")
	join := func(batches ...[]byte) []byte { return slices.Concat(batches...) }

	for _, c := range []struct {
		name      string
		in, want  []byte
		unchanged bool
	}{
		{"empties inside and at the end", join(a, e1, e2, b, e3), join(a, b, e3), false},
		{"an empty first", join(e1, a), a, false},
		{"none empty", join(a, b), join(a, b), true},
		{"one empty, alone", e1, e1, true},
		{"one empty, last", join(a, b, e3), join(a, b, e3), true},
		{"torn at the end", join(a, e1, b)[:len(a)+len(e1)+10], join(a, e1, b)[:len(a)+len(e1)+10], true},
		{"nothing", []byte{}, []byte{}, true},
	} {
		got := withoutInnerEmptyBatches(c.in)
		if !bytes.Equal(got, c.want) {
			t.Errorf("%s: got %d bytes, want %d", c.name, len(got), len(c.want))
		}
		if c.unchanged && len(c.in) > 0 && &got[0] != &c.in[0] {
			t.Errorf("%s: copied, want the records as they were", c.name)
		}
	}
}

// A read that finds only empty batches goes on past them, up to the high
// watermark and consumerReadsMax reads, so that a consumer gets records
// to move on with.
func TestAConsumerReadGoesOnPastSegmentsOfEmptyBatches(t *testing.T) {
	offset := int64(0)
	empty := func(records int) []byte {
		spec := batch.Spec{BaseTimestamp: 1, ProducerID: batch.NoProducerID}
		for range records {
			spec.Records = append(spec.Records, batch.Record{Key: []byte("k"), Value: []byte("v")})
		}
		b := batch.Build(spec)
		batch.SetBaseOffset(b, offset)
		offset += int64(records)
		h, err := batch.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		return batch.Empty(h)
	}
	// segments, by base offset: what a read from inside each returns.
	type segment struct {
		base    int64
		records []byte
	}
	var segments []segment
	add := func(b []byte) {
		h, _ := batch.Parse(b)
		segments = append(segments, segment{base: h.BaseOffset, records: b})
	}
	for range consumerReadsMax + 2 {
		add(empty(2))
	}
	realBase := offset
	real := batch.Build(batch.Spec{BaseTimestamp: 1, ProducerID: batch.NoProducerID, Records: []batch.Record{{Key: []byte("k"), Value: []byte("v")}}})
	batch.SetBaseOffset(real, realBase)
	add(real)
	reads := 0
	read := func(from int64, limit int) []byte {
		reads++
		for i := len(segments) - 1; i >= 0; i-- {
			if segments[i].base <= from {
				return segments[i].records
			}
		}
		return nil
	}

	for _, c := range []struct {
		name          string
		start         int
		highWatermark int64
		wantReads     int
		wantReal      bool
	}{
		{"a few empty segments, then records", consumerReadsMax - 1, realBase + 1, 3, true},
		{"more empty segments than reads", 0, realBase + 1, consumerReadsMax - 1, false},
		{"empty segments up to the high watermark", consumerReadsMax - 1, segments[consumerReadsMax].base, 0, false},
	} {
		reads = 0
		got := withoutInnerEmptyBatches(readPastEmptyBatches(segments[c.start].records, 1<<20, c.highWatermark, read))
		if reads != c.wantReads {
			t.Errorf("%s: %d reads after the first, want %d", c.name, reads, c.wantReads)
		}
		if hasReal := bytes.Equal(got, real); hasReal != c.wantReal {
			t.Errorf("%s: answer is the records: %v, want %v (%d bytes)", c.name, hasReal, c.wantReal, len(got))
		}
		if _, onlyEmpty := endOfEmptyBatches(got); !c.wantReal && !onlyEmpty {
			t.Errorf("%s: answer holds records where none are", c.name)
		}
	}
}
