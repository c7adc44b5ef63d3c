package log_test

import (
	"errors"
	"testing"
	"time"

	"sluice/core/log"
	"sluice/sim/simdisk"
)

// TestATruncationWaitsOutAFullDiskByItself: a truncation refuses appends
// until a checkpoint at or below the new end is durable. With the disk
// full the checkpoint cannot be written; the log must keep trying by
// itself, with nobody calling Sync again, so that appends resume once space
// returns (a follower holding the records it fetched waited forever, seed
// 27012 of the cluster workload).
func TestATruncationWaitsOutAFullDiskByItself(t *testing.T) {
	h := newHarness(t, 7, simdisk.Faults{})
	l := h.open(smallConfig())
	fill(t, l, 12, 4)
	h.syncAll(l)
	end := l.EndOffset() - 3
	if err := l.TruncateTo(end); err != nil {
		t.Fatal(err)
	}
	// Full from here on: the round the truncation began cannot write
	// the checkpoint.
	h.disk.SetFaults(simdisk.Faults{CapacityBytes: h.disk.Usage()})
	roundsBefore := l.SyncStats().RoundsStarted
	h.advance(time.Second)
	if _, err := l.AppendReplicated(replicatedBatch(end, 9, 1, 10, h.nowMilliseconds())); !errors.Is(err, log.ErrTruncationNotDurable) {
		t.Fatalf("append with the truncation's checkpoint unwritten: %v, want ErrTruncationNotDurable", err)
	}
	if rounds := l.SyncStats().RoundsStarted - roundsBefore; rounds < 3 {
		t.Fatalf("%d sync rounds in a second of full disk: the log does not retry the checkpoint", rounds)
	}

	h.disk.SetFaults(simdisk.Faults{})
	h.advance(time.Second)
	if _, err := l.AppendReplicated(replicatedBatch(end, 9, 1, 10, h.nowMilliseconds())); err != nil {
		t.Fatalf("append a second after space returned: %v (nobody began the round that writes the checkpoint)", err)
	}
}
