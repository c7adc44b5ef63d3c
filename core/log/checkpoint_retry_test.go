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
	h, l, end := truncatedOnAFullDisk(t)
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

// WhenDurable tells a waiter only once what it waits for is durable. While
// a full disk refuses the checkpoint a truncation needs, the truncation is
// not durable: a waiter is not told, however many rounds sync the files.
// A follower holding replicated records waits so, and appends when told;
// told early, its append was refused (the truncation still fences
// appends), it waited again, and the round its wait began completed at
// once (nothing to sync, the checkpoint refused again), telling it again:
// a recursion without end, a stack overflow (cluster seed 19008).
func TestWaitersOfAnUnwrittenCheckpointWaitForIt(t *testing.T) {
	h, l, end := truncatedOnAFullDisk(t)
	told, appended := 0, false
	var wait func()
	wait = func() {
		l.WhenDurable(func() {
			told++
			if told > 100 {
				t.Fatalf("told durable %d times, the truncation's checkpoint unwritten", told)
			}
			_, err := l.AppendReplicated(replicatedBatch(end, 9, 1, 10, h.nowMilliseconds()))
			if errors.Is(err, log.ErrTruncationNotDurable) {
				wait()
				return
			}
			if err != nil {
				t.Fatalf("append: %v", err)
			}
			appended = true
		})
	}
	wait()
	h.advance(time.Second)
	if told != 0 {
		t.Fatalf("told durable %d times while a full disk refused the truncation's checkpoint", told)
	}

	h.disk.SetFaults(simdisk.Faults{})
	h.advance(time.Second)
	if told != 1 || !appended {
		t.Fatalf("after space returned: told %d times, appended %v; want told once, and the append taken", told, appended)
	}
}

// truncatedOnAFullDisk opens a log, fills and syncs it, truncates its last
// three offsets and fills the disk: the round the truncation began cannot
// write the checkpoint. It returns the new end.
func truncatedOnAFullDisk(t *testing.T) (*harness, *log.Log, int64) {
	t.Helper()
	h := newHarness(t, 7, simdisk.Faults{})
	l := h.open(smallConfig())
	fill(t, l, 12, 4)
	h.syncAll(l)
	end := l.EndOffset() - 3
	if err := l.TruncateTo(end); err != nil {
		t.Fatal(err)
	}
	h.disk.SetFaults(simdisk.Faults{CapacityBytes: h.disk.Usage()})
	return h, l, end
}

// A moved log start whose checkpoint a full disk refused becomes durable
// once space returns, with nobody waiting and nothing appended: a follower
// reports only its durable start, and may rejoin the ISR (and a leader
// answer a DeleteRecords) only once it has reached the leader's.
func TestAMovedStartBecomesDurableOnceSpaceReturns(t *testing.T) {
	h := newHarness(t, 7, simdisk.Faults{})
	l := h.open(smallConfig())
	fill(t, l, 12, 4)
	h.syncAll(l)
	h.disk.SetFaults(simdisk.Faults{CapacityBytes: h.disk.Usage()})
	start := l.EndOffset() - 2
	if err := l.AdvanceStartOffset(start); err != nil {
		t.Fatal(err)
	}
	l.Sync()
	h.advance(time.Second)
	if got := l.DurableStartOffset(); got == start {
		t.Fatalf("durable start %d while a full disk refused the checkpoint", got)
	}
	h.disk.SetFaults(simdisk.Faults{})
	h.advance(time.Second)
	if got := l.DurableStartOffset(); got != start {
		t.Fatalf("durable start %d after space returned, want %d", got, start)
	}
}

// A restart (TruncateFullyAndStartAt, a follower behind its leader's log
// start) takes every old segment out of the log at once; the new start
// lives in the checkpoint alone. While a full disk refuses it, appends
// wait, however many sync rounds complete: a batch taken then, and counted
// synced, was lost at the next crash, recovery going back to the old
// start, without the new segment (log-synced-lost-29388).
func TestARestartFencesAppendsUntilItsCheckpointIsDurable(t *testing.T) {
	h := newHarness(t, 7, simdisk.Faults{})
	l := h.open(smallConfig())
	fill(t, l, 12, 4)
	h.syncAll(l)
	start := l.EndOffset() + 10
	if err := l.TruncateFullyAndStartAt(start); err != nil {
		t.Fatal(err)
	}
	b := replicatedBatch(start, 9, 1, 10, h.nowMilliseconds())
	// Room for the batch, not for the checkpoint.
	h.disk.SetFaults(simdisk.Faults{CapacityBytes: h.disk.Usage() + int64(len(b))})
	h.advance(time.Second)
	if _, err := l.AppendReplicated(b); !errors.Is(err, log.ErrTruncationNotDurable) {
		t.Fatalf("append with the restart's checkpoint unwritten: %v, want ErrTruncationNotDurable", err)
	}

	h.disk.SetFaults(simdisk.Faults{})
	appendSyncAndCrash(t, h, l, b, start)
}

// A truncation that leaves nothing from the start on empties the log: it
// restarts at its start, and appends wait for a checkpoint that records
// it. Cut as an ordinary truncation, it also dropped the epoch in force
// at the start (retention had moved the start onto it), which only the
// checkpoint could make durable; on a full disk an older epoch's batch was
// then taken at the start and synced, and after a crash recovery, back at
// the old start with that epoch's batches, refused it as bad data: a
// synced write lost (log seed 3695276).
func TestATruncationThatEmptiesTheLogFencesUntilItsCheckpointIsDurable(t *testing.T) {
	h := newHarness(t, 7, simdisk.Faults{})
	l := h.open(smallConfig())
	fill(t, l, 12, 4) // epochs 0, 1 and 2
	h.syncAll(l)
	start := l.EndOffset()
	mustAppend(t, l, makeBatch(1, 10, h.nowMilliseconds()), 2)
	h.syncAll(l)
	// A disk with no room for anything to grow, so that no checkpoint is
	// written from here on, while sync rounds complete. The start moves
	// onto the last batch: epoch 2's cache entry is now at the start.
	h.disk.SetFaults(simdisk.Faults{CapacityBytes: 1})
	if err := l.AdvanceStartOffset(start); err != nil {
		t.Fatal(err)
	}
	h.advance(time.Second)
	if got := l.DurableStartOffset(); got != 0 {
		t.Fatalf("durable start %d while a full disk refused the checkpoint, want 0", got)
	}

	if err := l.TruncateTo(start); err != nil {
		t.Fatal(err)
	}
	if l.StartOffset() != start || l.EndOffset() != start || l.LatestEpoch() != -1 {
		t.Fatalf("after TruncateTo(%d): [%d, %d), latest epoch %d; want [%d, %d), none", start, l.StartOffset(), l.EndOffset(), l.LatestEpoch(), start, start)
	}
	h.advance(time.Second)
	// Room for one batch of epoch 0, given at once, before a round could
	// take it for a checkpoint.
	b := replicatedBatch(start, 0, 1, 10, h.nowMilliseconds())
	h.disk.SetFaults(simdisk.Faults{CapacityBytes: h.disk.Usage() + int64(len(b))})
	if _, err := l.AppendReplicated(b); !errors.Is(err, log.ErrTruncationNotDurable) {
		t.Fatalf("append of epoch 0 with the emptying truncation's checkpoint unwritten: %v, want ErrTruncationNotDurable", err)
	}

	h.disk.SetFaults(simdisk.Faults{})
	appendSyncAndCrash(t, h, l, b, start)
}

// A restart at the start a durable checkpoint already holds needs no new
// checkpoint, and none may be waited for: there may be none due (an empty
// log restarted where it starts, whose checkpoint says all there is to
// say), and appends would wait for good.
func TestARestartAtTheDurableStartWaitsForOneSyncOnly(t *testing.T) {
	h := newHarness(t, 7, simdisk.Faults{})
	l := h.open(smallConfig())
	h.syncAll(l)
	h.advance(time.Second)
	if err := l.TruncateFullyAndStartAt(l.DurableStartOffset()); err != nil {
		t.Fatal(err)
	}
	h.advance(time.Second)
	if _, err := l.AppendReplicated(replicatedBatch(l.StartOffset(), 9, 1, 10, h.nowMilliseconds())); err != nil {
		t.Fatalf("append a second after a restart at the durable start: %v", err)
	}
}

// A restart away from the durable start fences appends until a checkpoint
// records its start; a second restart, back at the durable start, needs
// no checkpoint and must lift that fence. Left up, it waited for a
// checkpoint at the first restart's start, which a log starting elsewhere
// never writes, and refused every append from then on (log seed 93382).
func TestARestartAtTheDurableStartLiftsAnEarlierRestartsFence(t *testing.T) {
	h := newHarness(t, 7, simdisk.Faults{})
	l := h.open(smallConfig())
	fill(t, l, 12, 4)
	h.syncAll(l)
	durableStart := l.DurableStartOffset()
	if err := l.TruncateFullyAndStartAt(l.EndOffset() + 10); err != nil {
		t.Fatal(err)
	}
	// No room for the restart's checkpoint.
	h.disk.SetFaults(simdisk.Faults{CapacityBytes: h.disk.Usage()})
	h.advance(time.Second)
	if got := l.DurableStartOffset(); got != durableStart {
		t.Fatalf("durable start %d while a full disk refused the restart's checkpoint, want %d", got, durableStart)
	}
	if err := l.TruncateFullyAndStartAt(durableStart); err != nil {
		t.Fatal(err)
	}
	h.disk.SetFaults(simdisk.Faults{})
	appendSyncAndCrash(t, h, l, replicatedBatch(durableStart, 9, 1, 10, h.nowMilliseconds()), durableStart)
}

// A restart at the durable start, while the checkpoint of an earlier
// restart elsewhere is on its way to disk, must wait for a checkpoint of
// its own: the one in flight, once durable, sends recovery to the earlier
// restart's start, where no segment is left. Had it lifted the fence,
// appends counted synced would be lost at the next crash.
func TestACheckpointInFlightAtARestartDoesNotLiftItsFence(t *testing.T) {
	h := newHarness(t, 7, simdisk.Faults{})
	l := h.open(smallConfig())
	fill(t, l, 12, 4)
	h.syncAll(l)
	durableStart, away := l.DurableStartOffset(), l.EndOffset()+10
	// A round whose checkpoint would recover to the durable start, and
	// so fences nothing by its recovery point...
	if err := l.TruncateTo(durableStart); err != nil {
		t.Fatal(err)
	}
	l.Sync()
	if stats := l.SyncStats(); stats.RoundsStarted == stats.RoundsCompleted {
		t.Fatal("no sync round in flight after the truncation")
	}
	// ...writes the checkpoint of a restart elsewhere that came meanwhile,
	if err := l.TruncateFullyAndStartAt(away); err != nil {
		t.Fatal(err)
	}
	for {
		if start, writing := log.CheckpointWritingStart(l); writing && start == away {
			break
		}
		if !h.kernel.Step() {
			t.Fatal("the restart's checkpoint was never written")
		}
	}
	// ...and is on its way to disk when the log restarts at the durable
	// start.
	if err := l.TruncateFullyAndStartAt(durableStart); err != nil {
		t.Fatal(err)
	}
	for l.DurableStartOffset() != away {
		if !h.kernel.Step() {
			t.Fatal("the checkpoint in flight at the second restart never became durable")
		}
	}
	// No room for another checkpoint.
	h.disk.SetFaults(simdisk.Faults{CapacityBytes: h.disk.Usage()})
	h.advance(time.Second)
	if got := l.DurableStartOffset(); got != away {
		t.Fatalf("durable start %d a second into a full disk, want %d", got, away)
	}
	b := replicatedBatch(durableStart, 9, 1, 10, h.nowMilliseconds())
	if _, err := l.AppendReplicated(b); !errors.Is(err, log.ErrTruncationNotDurable) {
		t.Fatalf("append at %d with the durable checkpoint at %d: %v, want ErrTruncationNotDurable", durableStart, away, err)
	}

	h.disk.SetFaults(simdisk.Faults{})
	appendSyncAndCrash(t, h, l, b, durableStart)
}

// appendSyncAndCrash runs a second, appends b, which the log must take
// now, syncs, crashes, and checks that the log reopens at start with
// everything synced.
func appendSyncAndCrash(t *testing.T, h *harness, l *log.Log, b []byte, start int64) {
	t.Helper()
	h.advance(time.Second)
	if _, err := l.AppendReplicated(b); err != nil {
		t.Fatalf("append a second later: %v", err)
	}
	h.syncAll(l)
	synced := l.SyncedOffset()
	h.crash()
	l = h.open(smallConfig())
	if l.StartOffset() != start || l.EndOffset() < synced {
		t.Fatalf("after a crash the log is [%d, %d), want it to start at %d and keep what was synced, up to %d", l.StartOffset(), l.EndOffset(), start, synced)
	}
}
