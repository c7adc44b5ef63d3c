package log

import (
	"fmt"
	"slices"
)

// How a segment rewritten by compaction replaces, on disk, the segments it
// was cleaned from, so that a crash at any moment leaves either the old
// segments or the new one, never a mix and never neither. It is Kafka's
// protocol (LogCleaner, UnifiedLog.replaceSegments), run by the sync rounds
// of sync.go as extra steps between syncing files and writing the
// checkpoint:
//
//  1. Compaction writes the new segment as <base>.log.cleaned into the page
//     cache and switches the log to it in memory at once: readers see the
//     whole new segment or, before, the whole old ones. The swap waits for
//     the next sync round.
//  2. That round syncs the new file along with every other dirty file.
//  3. It then removes the old <base>.index and <base>.timeindex (they
//     describe the old file and must never be paired with the new one) and
//     renames <base>.log.cleaned to <base>.log.swap, and syncs the
//     directory. Once that sync completes the swap is committed: recovery
//     finishes any swap whose .swap file it finds, and deletes any .cleaned
//     file, which is an uncommitted one.
//  4. It removes the files of the other old segments, renames
//     <base>.log.swap over <base>.log, and syncs the directory again; then
//     it writes the new segment's index files, which the next round syncs.
//
// A crash during step 4 can keep the rename and lose some removals. The old
// segments left over then start inside the new segment's offset range
// (compaction keeps the last batch of every group, so the new segment ends
// exactly where the old ones did), and recovery deletes a segment that
// starts below the end of the one before it (see loadSegments in open.go).
//
// Because a round completes the swaps it took before SyncedOffset advances,
// the rules of sync.go hold unchanged: when a round completes, the disk
// holds what the log held when the round began.

// segmentSwap is one compaction output on its way to replacing, on disk,
// the segments it was cleaned from.
type segmentSwap struct {
	// number orders swaps by creation, from 1, for the cleaner offset's
	// claim (see settleCleanerOffset).
	number uint64
	// cleaned is the new segment, in l.segments from the moment it was
	// written.
	cleaned *segment
	// replaced are the old segments, out of l.segments, their files
	// closed but still on disk; replaced[0] has the same base offset.
	replaced []*segment
	stage    swapStage
	// taken: a sync round has begun that completes this swap.
	taken bool
}

type swapStage int

const (
	// swapWritten: the new file is <base>.log.cleaned.
	swapWritten swapStage = iota
	// swapCommitted: it is <base>.log.swap; recovery would finish the swap.
	swapCommitted
	// swapDone: it is <base>.log and the old files are gone.
	swapDone
	// swapCancelled: the new segment was deleted (retention, truncation)
	// before the swap finished; its files and the old ones were removed.
	swapCancelled
)

// path is where the new segment's file is now.
func (w *segmentSwap) path(dir string) string {
	base := w.cleaned.baseOffset
	switch w.stage {
	case swapWritten:
		return cleanedPath(dir, base)
	case swapCommitted:
		return swapPath(dir, base)
	}
	return segmentPath(dir, base)
}

// registerSwap records that cleaned replaces group in memory from now on;
// the next sync round makes it so on disk.
func (l *Log) registerSwap(cleaned *segment, group []*segment) {
	if group[0].baseOffset != cleaned.baseOffset || cleaned.swap != nil {
		panic(fmt.Sprintf("log: swap of segment %d does not line up with the group it replaces", cleaned.baseOffset))
	}
	l.swapsCreated++
	w := &segmentSwap{number: l.swapsCreated, cleaned: cleaned, replaced: slices.Clone(group)}
	cleaned.swap = w
	l.swaps = append(l.swaps, w)
	if l.world.Canaries.On(CanaryCompactionSwapsUnsynced) {
		// The planted bug: commit before the new file is durable.
		if err := l.world.FS.Rename(cleanedPath(l.dir, cleaned.baseOffset), swapPath(l.dir, cleaned.baseOffset)); err == nil {
			w.stage = swapCommitted
			l.directoryDirty = true
		}
	}
}

// swapsWaiting reports whether a swap waits for a round to take it.
func (l *Log) swapsWaiting() bool {
	for _, w := range l.swaps {
		if !w.taken {
			return true
		}
	}
	return false
}

// takeSwaps hands the swaps no round has taken yet to round.
func (l *Log) takeSwaps(round *syncRound) {
	for _, w := range l.swaps {
		if !w.taken {
			w.taken = true
			round.swaps = append(round.swaps, w)
		}
	}
}

// commitSwaps is step 3 for the round's swaps: it reports whether it issued
// a directory sync, whose completion comes back to completeOne.
func (l *Log) commitSwaps(round *syncRound) bool {
	issued := false
	for _, w := range round.swaps {
		if w.stage != swapWritten {
			continue
		}
		base := w.cleaned.baseOffset
		l.removeFile(offsetIndexPath(l.dir, base))
		l.removeFile(timeIndexPath(l.dir, base))
		if err := l.world.FS.Rename(cleanedPath(l.dir, base), swapPath(l.dir, base)); err != nil {
			round.err = fmt.Errorf("log: committing the compaction of segment %d: %w", base, err)
			return false
		}
		w.stage = swapCommitted
		issued = true
	}
	if issued {
		l.syncDirectoryFor(round)
	}
	return issued
}

// finishSwaps is step 4 for the round's swaps: it reports whether it issued
// a directory sync.
func (l *Log) finishSwaps(round *syncRound) bool {
	issued := false
	for _, w := range round.swaps {
		if w.stage != swapCommitted {
			continue
		}
		base := w.cleaned.baseOffset
		for _, old := range w.replaced[1:] {
			l.removeSegmentFiles(old.baseOffset)
		}
		if err := l.world.FS.Rename(swapPath(l.dir, base), segmentPath(l.dir, base)); err != nil {
			round.err = fmt.Errorf("log: finishing the compaction of segment %d: %w", base, err)
			return false
		}
		w.stage = swapDone
		w.cleaned.swap = nil
		l.forgetSwap(w)
		// The new index files may exist only now that the old ones are
		// durably gone; until a sync covers them they are a cache
		// recovery can do without.
		if w.cleaned.sealed {
			l.writeIndexFiles(w.cleaned)
		}
		issued = true
	}
	if issued {
		l.syncDirectoryFor(round)
		l.settleCleanerOffset()
	}
	return issued
}

// cancelSwap is called when the new segment of an unfinished swap is
// deleted: its file and the old segments' files all go.
func (l *Log) cancelSwap(w *segmentSwap) {
	l.cancelSwapKeepingBelow(w, -1)
}

// cancelSwapKeepingBelow cancels w for a restart at start: the new
// segment's file goes, and so do the old segments' files but those below
// start, which stay on disk as the restart's leftovers (returned; see
// keepBelowUntilRestartDurable). Before the swap committed, the old files
// are the segment as recovery knows it; after, removing the .swap file
// undoes the commit. A start of -1 keeps none.
func (l *Log) cancelSwapKeepingBelow(w *segmentSwap, start int64) (kept []restartLeftover) {
	l.removeFile(w.path(l.dir))
	for _, old := range w.replaced {
		if left := old.leftover(); left.whollyBelow(start) {
			kept = append(kept, left)
		} else {
			l.removeSegmentFiles(old.baseOffset)
		}
	}
	w.stage = swapCancelled
	w.cleaned.swap = nil
	l.forgetSwap(w)
	l.settleCleanerOffset()
	return kept
}

// forgetSwap drops a finished or cancelled swap from the unfinished ones.
func (l *Log) forgetSwap(w *segmentSwap) {
	i := slices.Index(l.swaps, w)
	if i < 0 {
		panic(fmt.Sprintf("log: swap of segment %d finished twice", w.cleaned.baseOffset))
	}
	l.swaps = slices.Delete(l.swaps, i, i+1)
}

// syncDirectoryFor syncs the partition directory as one more operation of
// round. It covers every name changed so far, so the directory is clean.
func (l *Log) syncDirectoryFor(round *syncRound) {
	l.directoryDirty = false
	round.pending++
	l.world.FS.SyncDir(l.dir, round.done)
}
