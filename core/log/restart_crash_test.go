package log_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"sluice/core/batch"
	"sluice/core/log"
	"sluice/sim/simdisk"
)

// A restart (TruncateFullyAndStartAt) that a crash interrupts before its
// checkpoint is durable sends recovery back to the old start, and the
// old log must be there as it was synced, at least below the new start:
// a follower in the ISR that restarted at its own end (its records lay
// below its leader's log start) came back empty at 0, below the end it had reported, and led the
// partition from there, writing again at offsets already acknowledged
// (cluster seed 2985856). The restart had removed the old segments at
// once, and the removal reached the disk before the checkpoint did.
func TestARestartCutShortByACrashKeepsTheOldLog(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(end int64) int64
	}{
		{"at the end", func(end int64) int64 { return end }},
		{"beyond the end", func(end int64) int64 { return end + 10 }},
		{"inside the log", func(end int64) int64 { return end / 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 11, simdisk.Faults{})
			l := h.open(smallConfig())
			stored := fill(t, l, 12, 4)
			h.syncAll(l)
			if l.SegmentCount() < 2 {
				t.Fatalf("%d segments; the test needs several", l.SegmentCount())
			}
			end := l.EndOffset()
			start := tc.start(end)
			if err := l.TruncateFullyAndStartAt(start); err != nil {
				t.Fatal(err)
			}
			// Room for the directory's changes, none for the checkpoint:
			// the rounds complete, and the restart stays undurable.
			h.disk.SetFaults(simdisk.Faults{CapacityBytes: h.disk.Usage()})
			h.advance(time.Second)
			if got := l.DurableStartOffset(); got != 0 {
				t.Fatalf("durable start %d while a full disk refused the restart's checkpoint, want 0", got)
			}
			h.crash()
			h.disk.SetFaults(simdisk.Faults{})
			l = h.open(smallConfig())
			if l.StartOffset() != 0 {
				t.Fatalf("after the crash the log starts at %d, want the durable start 0", l.StartOffset())
			}
			// The log comes back with every batch wholly below the
			// start: whole, restarted at or beyond its end; restarted
			// inside it, what lies below the start, the segment that
			// straddles it cut there (cluster seed 72609), and never
			// what the restart cut.
			kept := readAll(t, l)
			want := prefixUpTo(stored, start)
			if len(kept) != len(want) {
				t.Fatalf("after the crash the log is [0, %d) with %d batches, want the %d synced below %d", l.EndOffset(), len(kept), len(want), start)
			}
			for i := range want {
				if !bytes.Equal(kept[i], want[i]) {
					t.Fatalf("batch %d differs after the crash", i)
				}
			}
		})
	}
}

// A restart inside the log that a crash cuts short before anything of it
// is durable leaves the old files as they were: the straddling segment's
// cut undone, the later segments' removal too. Recovery must bring the old
// log back consistent, a prefix of what was synced that holds at least
// everything below the restart's start, whichever of the restart's
// changes reached the disk.
func TestARestartInsideTheLogCrashedAtOnceKeepsAConsistentLog(t *testing.T) {
	for _, settle := range []time.Duration{0, 500 * time.Microsecond, time.Millisecond, 2 * time.Millisecond} {
		t.Run(settle.String(), func(t *testing.T) {
			h := newHarness(t, 17, simdisk.Faults{})
			l := h.open(smallConfig())
			stored := fill(t, l, 12, 4)
			h.syncAll(l)
			start := l.EndOffset()/2 + 1
			if err := l.TruncateFullyAndStartAt(start); err != nil {
				t.Fatal(err)
			}
			h.advance(settle)
			h.crash()
			l = h.open(smallConfig())
			kept := readAll(t, l)
			if l.StartOffset() != 0 && l.StartOffset() != start {
				t.Fatalf("after the crash the log starts at %d, want 0 or %d", l.StartOffset(), start)
			}
			if l.StartOffset() == start {
				if len(kept) != 0 {
					t.Fatalf("the restart is durable, yet %d batches came back", len(kept))
				}
				return
			}
			if want := prefixUpTo(stored, start); len(kept) < len(want) {
				t.Fatalf("after the crash %d batches came back, want at least the %d below %d", len(kept), len(want), start)
			}
			for i := range kept {
				if i >= len(stored) || !bytes.Equal(kept[i], stored[i]) {
					t.Fatalf("batch %d after the crash is not the old log's", i)
				}
			}
		})
	}
}

// A restart while a cut is not yet durable would have to keep the old
// segments below its start (recovery needs their synced records if a
// crash comes before the restart's checkpoint) and cannot (one could come
// back with the cut undone), so it is refused until the cut's sync
// completes. Taken at once, it deleted them, and a crash before its
// checkpoint brought the log back empty at the old start (log seed 1172).
func TestARestartWaitsForAPendingCut(t *testing.T) {
	h := newHarness(t, 13, simdisk.Faults{})
	l := h.open(smallConfig())
	stored := fill(t, l, 12, 4)
	h.syncAll(l)
	last, _ := batch.Parse(stored[len(stored)-1])
	cut := last.BaseOffset
	if err := l.TruncateTo(cut); err != nil {
		t.Fatal(err)
	}
	start := cut + 10
	if err := l.TruncateFullyAndStartAt(start); !errors.Is(err, log.ErrTruncationNotDurable) {
		t.Fatalf("restart at %d with the cut to %d not yet durable: %v, want ErrTruncationNotDurable", start, cut, err)
	}
	if l.StartOffset() != 0 || l.EndOffset() != cut {
		t.Fatalf("after the refused restart the log is [%d, %d), want [0, %d) untouched", l.StartOffset(), l.EndOffset(), cut)
	}
	h.advance(time.Second)
	if err := l.TruncateFullyAndStartAt(start); err != nil {
		t.Fatalf("restart once the cut is durable: %v", err)
	}
	// Room for the directory's changes, none for the checkpoint.
	h.disk.SetFaults(simdisk.Faults{CapacityBytes: h.disk.Usage()})
	h.advance(time.Second)
	h.crash()
	h.disk.SetFaults(simdisk.Faults{})
	l = h.open(smallConfig())
	want := prefixUpTo(stored, cut)
	kept := readAll(t, l)
	if l.StartOffset() != 0 || l.EndOffset() != cut || len(kept) != len(want) {
		t.Fatalf("after the crash the log is [%d, %d) with %d batches, want the synced [0, %d) with %d", l.StartOffset(), l.EndOffset(), len(kept), cut, len(want))
	}
	for i := range want {
		if !bytes.Equal(kept[i], want[i]) {
			t.Fatalf("batch %d differs after the crash", i)
		}
	}
}

// Once the restart's checkpoint is durable, the old segments it kept
// on disk go, and a crash leaves the restarted log alone.
func TestADurableRestartRemovesTheOldSegments(t *testing.T) {
	h := newHarness(t, 12, simdisk.Faults{})
	l := h.open(smallConfig())
	fill(t, l, 12, 4)
	h.syncAll(l)
	start := l.EndOffset() / 2
	if err := l.TruncateFullyAndStartAt(start); err != nil {
		t.Fatal(err)
	}
	h.syncAll(l)
	h.drain()
	names, err := h.disk.ReadDir(testDir)
	if err != nil {
		t.Fatal(err)
	}
	var segments []string
	for _, name := range names {
		if strings.HasSuffix(name, ".log") {
			segments = append(segments, name)
		}
	}
	if len(segments) != 1 {
		t.Fatalf("segment files after a durable restart at %d: %v, want the new one alone", start, segments)
	}
	h.crash()
	l = h.open(smallConfig())
	if l.StartOffset() != start || l.EndOffset() != start {
		t.Fatalf("after a crash: [%d, %d), want [%d, %d)", l.StartOffset(), l.EndOffset(), start, start)
	}
}

// An empty segment at the restart's start has the new segment's name: it
// must go, not stay behind as a leftover, whose removal once the restart
// is durable would take the new segment's file away, and what was
// appended to it with it (log seed 3485885, in the first version of the
// leftovers).
func TestARestartWhereAnEmptySegmentBeginsKeepsWhatFollows(t *testing.T) {
	h := newHarness(t, 13, simdisk.Faults{})
	l := h.open(smallConfig())
	h.syncAll(l)
	if err := l.TruncateFullyAndStartAt(0); err != nil { // the empty log's own start
		t.Fatal(err)
	}
	h.advance(time.Second) // the restart's fence lifts
	stored := fill(t, l, 12, 4)
	h.syncAll(l)
	synced := l.SyncedOffset()
	h.crash()
	l = h.open(smallConfig())
	kept := readAll(t, l)
	if l.EndOffset() < synced || len(kept) != len(stored) {
		t.Fatalf("after a crash the log is [%d, %d) with %d batches, want the synced [0, %d) with %d", l.StartOffset(), l.EndOffset(), len(kept), synced, len(stored))
	}
}

// A restart inside a segment a compaction swap has not finished putting
// on disk cannot keep what lies below its start: the old segments the
// swap was cleaned from are what a crash brings back, and they cannot be
// cut as the new one could. Taken at once, the restart deleted the whole
// group, and a crash before its checkpoint lost every record of it below
// the start. It is refused (ErrSwapNotFinished) until a sync round
// finishes the swap, and then keeps the new segment cut at its start.
func TestARestartInsideASegmentBeingSwappedKeepsWhatLiesBelow(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	l := compactionScenario(t, h)
	uncompacted, _ := logRecords(t, l)
	passWithoutSync(t, l)
	compacted, _ := logRecords(t, l)
	// Just past the first record of a segment being swapped in that
	// holds more than one.
	start := int64(-1)
	for _, swapped := range log.UnfinishedSwaps(l) {
		for _, r := range compacted {
			if start < 0 && r.offset >= swapped[0] && r.offset+1 < swapped[1] {
				start = r.offset + 1
			}
		}
	}
	if start < 0 {
		t.Fatalf("no unfinished compaction swap holds a record: the test tests nothing")
	}
	// A crash may find the swaps done or undone.
	want, wantUndone := recordsIn(compacted, 0, start), recordsIn(uncompacted, 0, start)
	refusals := 0
	for {
		err := l.TruncateFullyAndStartAt(start)
		if err == nil {
			break
		}
		if !errors.Is(err, log.ErrSwapNotFinished) || refusals == 3 {
			t.Fatalf("restart at %d: %v after %d refusals", start, err, refusals)
		}
		refusals++
		if got, _ := logRecords(t, l); describeRecords(got) != describeRecords(compacted) {
			t.Fatalf("the refused restart changed the log")
		}
		h.advance(time.Second)
	}
	// Room for the directory's changes, none for the checkpoint.
	h.disk.SetFaults(simdisk.Faults{CapacityBytes: h.disk.Usage()})
	h.advance(time.Second)
	h.crash()
	h.disk.SetFaults(simdisk.Faults{})
	l = h.open(compactConfig())
	got, _ := logRecords(t, l)
	if below := recordsIn(got, 0, start); l.StartOffset() != 0 || below != want && below != wantUndone {
		t.Fatalf("after %d refusals and a crash before the restart's checkpoint the log starts at %d with below %d\n %s\nwant at 0\n %s\nor, with the swaps undone,\n %s",
			refusals, l.StartOffset(), start, below, want, wantUndone)
	}
}
