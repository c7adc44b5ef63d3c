package replica

import (
	"testing"
	"time"

	"sluice/core/batch"
)

// TestTimestampLookupSkipsABatchWhoseLateRecordsWereDeleted: DeleteRecords
// put the log start inside a batch whose only record reaching the target
// lies below the start. Kafka's FileRecords.searchForTimestamp needs a
// record at or above the start with a timestamp at or above the target, so
// it goes on to the next batch; answering inside the first batch would
// name an offset whose record is older than the target, with a timestamp
// no record left carries.
func TestTimestampLookupSkipsABatchWhoseLateRecordsWereDeleted(t *testing.T) {
	h := newHarness(t, 1, nil)
	h.setLeader(1, []int32{1})
	p := h.partition(1)
	now := h.nodes[1].machine.Clock.Now().UnixMilli()
	// Offsets 0-2 at now+100, now+1, now+2; offset 3 at now+50.
	first := batch.Build(batch.Spec{BaseTimestamp: now, ProducerID: batch.NoProducerID, Records: []batch.Record{
		{Value: []byte("a0"), TimestampDelta: 100}, {Value: []byte("a1"), TimestampDelta: 1}, {Value: []byte("a2"), TimestampDelta: 2}}})
	second := batch.Build(batch.Spec{BaseTimestamp: now + 50, ProducerID: batch.NoProducerID, Records: []batch.Record{{Value: []byte("b0")}}})
	for _, b := range [][]byte{first, second} {
		if _, err := p.AppendAsLeader(b, false); err != nil {
			t.Fatal(err)
		}
	}
	h.run(100 * time.Millisecond)
	deleted := false
	p.DeleteRecords(1, 10*time.Second, func(low int64, err error) {
		if low != 1 || err != nil {
			t.Errorf("DeleteRecords(1) = %d, %v", low, err)
		}
		deleted = true
	})
	h.runUntil("records deleted", func() bool { return deleted })

	relative := func(ts int64) int64 { // -1 stays -1
		if ts < 0 {
			return ts
		}
		return ts - now
	}
	for _, c := range []struct {
		target, offset, timestamp int64
	}{
		{now + 50, 3, now + 50}, // offset 0's now+100 is gone
		{now + 2, 2, now + 2},   // inside the first batch, above the start
		{now, 1, now + 1},       // the first record left
		{now + 51, -1, -1},      // nothing left reaches it
	} {
		offset, timestamp, err := p.OffsetForTimestamp(c.target, -1)
		if err != nil || offset != c.offset || timestamp != c.timestamp {
			t.Errorf("OffsetForTimestamp(now+%d) = offset %d at %d (from now), %v; want offset %d at %d",
				c.target-now, offset, relative(timestamp), err, c.offset, relative(c.timestamp))
		}
	}
}
