package log_test

import (
	"testing"

	"sluice/core/log"
	"sluice/sim/simdisk"
)

// TestDelayedSyncPromisesNothingEarly switches on the BUGGIFY site
// log-sync-delayed, which defers the start of a sync round: appends made
// during the delay join the round, and nothing is reported durable, nor
// does a WhenDurable call return, before the round's fsync completes.
func TestDelayedSyncPromisesNothingEarly(t *testing.T) {
	// The fsync takes longer than the longest delay, so the moment the
	// round has begun and not completed is easy to reach.
	const syncLatency = 2 * log.SyncDelayBuggifyMax
	h := newHarness(t, 1, simdisk.Faults{SyncLatencyMin: syncLatency, SyncLatencyMax: syncLatency})
	h.buggifyAll = true
	l := h.open(log.DefaultConfig())
	mustAppend(t, l, makeBatch(1, 10, 1), 0)
	h.syncAll(l) // the first round also writes the checkpoint
	var reported []int64
	l.OnSynced(func(synced int64) { reported = append(reported, synced) })
	durable := false
	before := l.SyncStats().RoundsStarted

	mustAppend(t, l, makeBatch(3, 10, 1), 0)
	l.WhenDurable(func() { durable = true })
	if l.SyncStats().RoundsStarted != before {
		t.Fatalf("a round started at once; the site should have delayed it")
	}
	// Within the delay a second append and a second Sync join the
	// same round instead of starting one.
	h.advance(log.SyncDelayBuggifyMin / 2)
	mustAppend(t, l, makeBatch(2, 10, 1), 0)
	l.Sync()
	if got := l.SyncStats().RoundsStarted; got != before {
		t.Fatalf("rounds started %d during the delay, want %d", got, before)
	}
	// Once the delay is over the round begins, but its fsync has not
	// completed yet: nothing is durable.
	h.advance(log.SyncDelayBuggifyMax)
	if got := l.SyncStats().RoundsStarted; got != before+1 {
		t.Fatalf("rounds started %d after the delay, want %d", got, before+1)
	}
	if l.SyncedOffset() != 1 || durable || len(reported) != 0 {
		t.Fatalf("before the fsync completed: synced %d, WhenDurable called %v, OnSynced saw %v", l.SyncedOffset(), durable, reported)
	}
	h.drain()
	if l.SyncedOffset() != 6 || !durable || len(reported) != 1 || reported[0] != 6 {
		t.Fatalf("after the round: synced %d, WhenDurable called %v, OnSynced saw %v; want 6, true, [6]", l.SyncedOffset(), durable, reported)
	}
	if got := l.SyncStats().RoundsStarted; got != before+1 {
		t.Fatalf("the delayed round took %d rounds, want one", got-before)
	}
}

// TestCrashDuringDelayedSyncLosesOnlyUnsynced crashes the node while a
// delayed round waits to begin: what it would have covered was never
// promised, and what was synced before survives.
func TestCrashDuringDelayedSyncLosesOnlyUnsynced(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	h.buggifyAll = true
	l := h.open(log.DefaultConfig())
	mustAppend(t, l, makeBatch(2, 10, 1), 0)
	h.syncAll(l)
	mustAppend(t, l, makeBatch(3, 10, 1), 0)
	l.Sync()
	h.advance(log.SyncDelayBuggifyMin / 2)
	if l.SyncedOffset() != 2 {
		t.Fatalf("synced %d while the round waited to begin, want 2", l.SyncedOffset())
	}
	h.crash()
	h.disk.SetFaults(simdisk.Faults{})
	l = h.open(log.DefaultConfig())
	if l.EndOffset() < 2 {
		t.Fatalf("synced batches lost in the crash: end %d, want at least 2", l.EndOffset())
	}
	h.drain() // the timer of the crashed incarnation must not run
	if len(h.halts) != 0 {
		t.Fatalf("halts after the crash: %v", h.halts)
	}
}
