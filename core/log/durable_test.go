package log_test

import (
	"testing"

	"sluice/sim/simdisk"
)

// TestWhenDurableWaitsForACoveringRound checks that WhenDurable fires only
// after a sync round that began after the call, and at once (on a later
// turn) when nothing is dirty.
func TestWhenDurableWaitsForACoveringRound(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{SyncLatencyMin: 1e6, SyncLatencyMax: 5e6})
	l := h.open(smallConfig())
	h.syncAll(l)

	fired := 0
	l.WhenDurable(func() { fired++ })
	if fired != 0 {
		t.Fatalf("WhenDurable ran inside the call")
	}
	h.drain()
	if fired != 1 {
		t.Fatalf("nothing dirty: fired %d times, want 1", fired)
	}

	info := mustAppend(t, l, makeBatch(3, 10, h.nowMilliseconds()), 0)
	var syncedWhenFired int64 = -1
	l.WhenDurable(func() { syncedWhenFired = l.SyncedOffset() })
	// An append after the call is not what the call waits for, but a
	// round in flight must not satisfy a call made after its start.
	mustAppend(t, l, makeBatch(2, 10, h.nowMilliseconds()), 0)
	late := false
	l.WhenDurable(func() { late = l.SyncedOffset() == l.EndOffset() })
	h.drain()
	if syncedWhenFired <= info.LastOffset {
		t.Fatalf("fired with synced offset %d, before the append ending at %d was durable", syncedWhenFired, info.LastOffset)
	}
	if !late {
		t.Fatalf("the second call fired before everything before it was durable")
	}
}

// TestTruncateFullyAndStartAt restarts an empty log beyond its old end, as
// a follower does after installing a snapshot.
func TestTruncateFullyAndStartAt(t *testing.T) {
	h := newHarness(t, 2, simdisk.Faults{})
	l := h.open(smallConfig())
	mustAppend(t, l, makeBatch(5, 10, h.nowMilliseconds()), 0)
	if err := l.TruncateFullyAndStartAt(100); err != nil {
		t.Fatal(err)
	}
	if l.StartOffset() != 100 || l.EndOffset() != 100 {
		t.Fatalf("start %d end %d, want 100 100", l.StartOffset(), l.EndOffset())
	}
	durable := false
	l.WhenDurable(func() { durable = true })
	h.drain()
	if !durable {
		t.Fatal("reset never became durable")
	}
	h.crash()
	l = h.open(smallConfig())
	if l.StartOffset() != 100 || l.EndOffset() != 100 {
		t.Fatalf("after a crash: start %d end %d, want 100 100", l.StartOffset(), l.EndOffset())
	}
	if _, err := l.AppendReplicated(replicatedBatch(100, 3, 2, 10, h.nowMilliseconds())); err != nil {
		t.Fatalf("append after the reset: %v", err)
	}
}

// TestTruncateFullyAndStartAtAnExistingSegmentsBase restarts the log at an
// offset where one of its live segments begins, as a follower does when it
// must cut below its own log start (moved inside that segment by a
// deletion): the new segment file has that segment's name, and what is
// appended to it must survive a crash.
func TestTruncateFullyAndStartAtAnExistingSegmentsBase(t *testing.T) {
	h := newHarness(t, 3, simdisk.Faults{})
	l := h.open(smallConfig())
	mustAppend(t, l, makeBatch(1, 600, h.nowMilliseconds()), 0) // offset 0
	mustAppend(t, l, makeBatch(4, 100, h.nowMilliseconds()), 0) // 1-4, a segment of its own
	if l.SegmentCount() != 2 {
		t.Fatalf("%d segments; the test needs one to begin at offset 1", l.SegmentCount())
	}
	h.drain()
	if err := l.AdvanceStartOffset(3); err != nil { // inside the segment at 1
		t.Fatal(err)
	}
	h.drain()
	if err := l.TruncateFullyAndStartAt(1); err != nil {
		t.Fatal(err)
	}
	h.drain()
	if _, err := l.AppendReplicated(replicatedBatch(1, 2, 1, 10, h.nowMilliseconds())); err != nil {
		t.Fatalf("append after the restart: %v", err)
	}
	h.syncAll(l)
	h.drain()
	h.crash()
	l = h.open(smallConfig())
	if l.StartOffset() != 1 || l.EndOffset() != 2 {
		t.Fatalf("after a crash: start %d end %d, want 1 and 2: the record appended at 1 is gone", l.StartOffset(), l.EndOffset())
	}
}

// TestAWaiterThatSyncsDoesNotGetARoundBegunOverIt covers the case where a
// round finishes while appends made during it left the files dirty, and
// one of its WhenDurable waiters appends and syncs (as a follower's
// records held behind a truncation do): the waiter's Sync begins the next
// round, and the finishing round must not begin another over it. It did
// (cluster regression cluster-panic-log-round-overlap-14), and the
// replaced round's syncs then completed into a round no longer the log's:
// "log: sync round completed twice".
func TestAWaiterThatSyncsDoesNotGetARoundBegunOverIt(t *testing.T) {
	h := newHarness(t, 4, simdisk.Faults{SyncLatencyMin: 1e6, SyncLatencyMax: 5e6})
	l := h.open(smallConfig())
	h.syncAll(l)

	mustAppend(t, l, makeBatch(2, 10, h.nowMilliseconds()), 0)
	waited := 0
	l.WhenDurable(func() {
		waited++
		// The waiter writes again and wants it durable: it begins the
		// next round itself.
		mustAppend(t, l, makeBatch(1, 10, h.nowMilliseconds()), 0)
		l.WhenDurable(func() { waited++ })
	})
	// Dirty the files again while the first round is under way, so that
	// the round, once finished, has a next one to begin.
	mustAppend(t, l, makeBatch(1, 10, h.nowMilliseconds()), 0)
	h.drain()
	if waited != 2 {
		t.Fatalf("%d waiters told, want 2", waited)
	}
	if l.SyncedOffset() != l.EndOffset() {
		t.Fatalf("synced offset %d, end %d: the last appends never became durable", l.SyncedOffset(), l.EndOffset())
	}
	stats := l.SyncStats()
	if stats.RoundsStarted != stats.RoundsCompleted {
		t.Fatalf("%d rounds started, %d completed", stats.RoundsStarted, stats.RoundsCompleted)
	}
}
