package log

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sort"

	"sluice/core"
)

// Truncations, the checkpoint, and the trust recovery grants.
//
// Recovery must bring back a prefix of some state the log was in, never a
// mix of two. Two things could mix them, and the log rules out both:
//
//   - Stale segments. A truncation deletes segments and cuts one, but until
//     a sync covers it a crash may undo any part of that; had new batches
//     been appended meanwhile, a stale segment could line up after them (a
//     segment re-created under a deleted one's name is the worst case). So
//     after a truncation, whether by TruncateTo, by recovery itself, or by
//     a refused append cutting its partial write back (else the segment
//     could seal, and the next fill, over bytes a crash brings back),
//     appends are refused with ErrTruncationNotDurable until a sync round
//     that began after it has completed. TruncateTo and Open start that
//     round themselves. Until then a crash can only bring back the old
//     state or a prefix of it.
//
//   - Trusted segments. Recovery trusts, without reading all their batches,
//     the segments that end strictly below the checkpoint's recovery point
//     (see open.go). A checkpoint is written at the end of a round, once
//     the round's files are synced, with the round's end offset as its
//     recovery point: every segment ending strictly below that was sealed
//     before the round began, so the round, or an earlier one, made its
//     bytes, its index files and its directory entry durable. (Strictly: a
//     checkpoint must not vouch for the segment that was active when its
//     round began, which may seal later, at the recovery point itself, with
//     index files no sync covered yet.) A truncation may cut a trusted
//     segment - recovery notices, because the segment no longer ends where
//     the next begins - but new batches must never be written below the
//     highest recovery point a crash could leave on disk, so appends also
//     wait until a checkpoint at or below the end is durable. The round a
//     truncation starts writes it.

// recoveryPointHigh is the highest recovery point a crash could leave on
// disk: the durable checkpoint's, or the one being written if higher.
func (l *Log) recoveryPointHigh() int64 {
	return l.checkpointHigh(func(c *checkpoint) int64 { return c.recoveryPoint })
}

// fenced reports whether appends must wait: a truncation is not durable
// yet, or a restart's start is in no durable checkpoint yet, or the end is
// below data a crash could leave recovery trusting, or below a cleaner
// offset a crash could leave recovery believing (new records there would
// pass for compacted ones; see compaction.go).
func (l *Log) fenced() bool {
	if l.truncationPending && l.world.Canaries.On(CanaryAppendBeforeTruncationDurable) {
		return false
	}
	return l.truncationPending || l.restartedStart >= 0 || l.endOffset < l.recoveryPointHigh() || l.endOffset < l.cleanerOffsetHigh()
}

// cleanerOffsetHigh is the highest cleaner offset a crash could leave on
// disk.
func (l *Log) cleanerOffsetHigh() int64 {
	return l.checkpointHigh(func(c *checkpoint) int64 { return c.cleanerOffset })
}

// checkpointHigh is the highest value of field a crash could leave on
// disk: the durable checkpoint's, or the one being written if higher.
func (l *Log) checkpointHigh(field func(*checkpoint) int64) int64 {
	high := int64(0)
	if l.checkpointDurable != nil {
		high = field(l.checkpointDurable)
	}
	if l.checkpointWriting != nil {
		high = max(high, field(l.checkpointWriting))
	}
	return high
}

// truncated notes that the log's files were cut or deleted at its end: the
// fence holds until a round that begins after now completes.
func (l *Log) truncated() {
	l.truncationPending = true
	l.truncationRound = l.syncStats.RoundsStarted
}

// checkpointDue reports whether a checkpoint with this recovery point
// would say something the last one written (or being written) does not: a
// new start offset, new epochs, a lower recovery point to lift the fence,
// or more segments recovery may trust.
func (l *Log) checkpointDue(recoveryPoint int64) bool {
	last := l.checkpointWriting
	if last == nil {
		last = l.checkpointDurable
	}
	if last == nil {
		return true
	}
	return last.startOffset != l.startOffset ||
		last.cleanerOffset != l.cleanerOffsetSafe ||
		!slices.Equal(last.epochs, l.epochs.entries) ||
		l.endOffset < l.recoveryPointHigh() ||
		l.segmentsTrusted(last.recoveryPoint) != l.segmentsTrusted(recoveryPoint)
}

// segmentsTrusted counts the segments a checkpoint with this recovery point
// lets recovery trust: those ending strictly below it.
func (l *Log) segmentsTrusted(recoveryPoint int64) int {
	// Segment i ends where segment i+1 starts.
	after := sort.Search(len(l.segments), func(i int) bool { return l.segments[i].baseOffset >= recoveryPoint })
	return max(after-1, 0)
}

// writeCheckpoint writes the checkpoint as a temporary file, syncs it,
// renames it over the old one and syncs the directory, then completes the
// round's last operation. Its recovery point is the round's end offset,
// durable now that the round's files are synced; its cleaner offset is
// the one whose rewritten segments are all durable (cleanerOffsetSafe). It
// reports false, and writes nothing, if the temporary file cannot be
// written (a full disk): the checkpoint stays due and a later round tries
// again. A failed sync halts, as any does.
func (l *Log) writeCheckpoint(round *syncRound) bool {
	c := &checkpoint{startOffset: l.startOffset, recoveryPoint: round.endOffset, cleanerOffset: l.cleanerOffsetSafe, epochs: l.checkpointEpochs()}
	fs := l.world.FS
	final, temporary := l.checkpointPaths()
	f, err := fs.OpenFile(temporary, true)
	if err == nil {
		if err = f.Truncate(0); err == nil {
			l.writeScratch = c.appendTo(l.scratchForWrite())
			_, err = f.WriteAt(l.writeScratch, 0)
		}
		if err != nil {
			f.Close()
			fs.Remove(temporary)
		}
	}
	if err != nil {
		round.checkpointSkipped = true
		level := slog.LevelWarn
		if errors.Is(err, core.ErrDiskFull) {
			level = slog.LevelInfo
		}
		l.logger().Log(context.Background(), level, "checkpoint not written; a later sync retries", "error", err)
		return false
	}
	round.checkpoint = c
	l.checkpointWriting = c
	round.pending++
	done := round.done
	f.Sync(func(err error) {
		f.Close()
		if err != nil || l.failure != nil {
			done(err)
			return
		}
		if err := fs.Rename(temporary, final); err != nil {
			done(err)
			return
		}
		fs.SyncDir(l.dir, done)
	})
	return true
}

// checkpointEpochs is a copy of the epoch cache for a new checkpoint: the
// last checkpoint's own when they are the same, as they nearly always are
// (a checkpoint's epochs are never changed once it is made).
func (l *Log) checkpointEpochs() []EpochEntry {
	last := l.checkpointWriting
	if last == nil {
		last = l.checkpointDurable
	}
	if last != nil && slices.Equal(last.epochs, l.epochs.entries) {
		return last.epochs
	}
	return l.epochs.clone()
}

// checkpointPaths returns the checkpoint's path and its temporary file's,
// joined once per log rather than for every checkpoint written.
func (l *Log) checkpointPaths() (final, temporary string) {
	if l.checkpointPath == "" {
		l.checkpointPath = joinPath(l.dir, checkpointName)
		l.checkpointTemporaryPath = joinPath(l.dir, checkpointName+temporarySuffix)
	}
	return l.checkpointPath, l.checkpointTemporaryPath
}
