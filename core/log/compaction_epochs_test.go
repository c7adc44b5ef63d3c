package log_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"sluice/core/batch"
	"sluice/core/log"
	"sluice/sim/simdisk"
)

// Compaction keeps the first batch of every leader epoch, empty if all its
// records go, so that a replica copying the compacted log learns the same
// epochs: an epoch whose only batch went would otherwise be unknown to the
// copy, which, leading later, would send a follower holding that batch
// below its high watermark (cluster-panic-427753).
func TestCompactionKeepsTheFirstBatchOfEachEpoch(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	l := h.open(compactConfig())
	for i := range 5 {
		mustAppend(t, l, keyedBatch(h.nowMilliseconds(), fmt.Sprintf("k%d=a", i)), 0)
	}
	// Epoch 3 writes one record, which a later one supersedes; epoch 5's
	// first batch is superseded too, its second not.
	epoch3 := mustAppend(t, l, keyedBatch(h.nowMilliseconds(), "k0=b"), 3)
	epoch5 := mustAppend(t, l, keyedBatch(h.nowMilliseconds(), "k1=b", "k2=b"), 5)
	for i := range 30 {
		mustAppend(t, l, keyedBatch(h.nowMilliseconds(), "k0=c", "k1=c", "k2=c", fmt.Sprintf("fill%d=%s", i, strings.Repeat("f", 30))), 5)
	}
	h.syncAll(l)
	epochs := l.EpochEntries()
	compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()})

	if got := l.EpochEntries(); !slices.Equal(got, epochs) {
		t.Fatalf("compaction changed the epoch cache: %v, was %v", got, epochs)
	}
	_, headers := logRecords(t, l)
	for _, first := range []log.AppendInfo{epoch3, epoch5} {
		i := slices.IndexFunc(headers, func(h batch.Header) bool { return h.BaseOffset == first.FirstOffset })
		if i < 0 {
			t.Fatalf("the batch at %d, first of its epoch, went: %+v", first.FirstOffset, headers)
		}
		if k := headers[i]; k.RecordCount != 0 || k.LastOffset() != first.LastOffset {
			t.Fatalf("the first batch of its epoch became %+v, want it empty over [%d, %d]", k, first.FirstOffset, first.LastOffset)
		}
	}

	// A replica copying the compacted log knows every epoch where the
	// original does.
	copied := newHarness(t, 2, simdisk.Faults{})
	replica := copied.open(compactConfig())
	if _, err := replica.AppendReplicated(joinAll(t, l)); err != nil {
		t.Fatalf("copying the compacted log: %v", err)
	}
	if got := replica.EpochEntries(); !slices.Equal(got, epochs) {
		t.Fatalf("a copy of the compacted log has epochs %v, want %v", got, epochs)
	}
	for _, epoch := range []int32{0, 3, 5} {
		wantEpoch, wantEnd := l.EndOffsetForEpoch(epoch)
		if gotEpoch, gotEnd := replica.EndOffsetForEpoch(epoch); gotEpoch != wantEpoch || gotEnd != wantEnd {
			t.Fatalf("epoch %d ends at (%d, %d) in the copy, (%d, %d) in the original", epoch, gotEpoch, gotEnd, wantEpoch, wantEnd)
		}
	}
}
