package log

import (
	"errors"
	"fmt"
)

// TruncateTo removes every batch whose last offset is at or above offset,
// so that the log ends at or below offset, at a batch boundary: a follower
// does this where its log diverges from the leader's. Segments after the
// cut are deleted and the epoch cache forgets epochs that started after
// it; SyncedOffset drops to at most the new end. An offset at or above
// EndOffset changes nothing; one below StartOffset is ErrOffsetOutOfRange.
// If nothing at or after StartOffset would remain, the log is emptied and
// restarts at StartOffset. Where compaction removed batches, the log ends
// where the last remaining batch before offset ends, which may be below
// offset.
//
// The truncation reaches the disk's page cache at once and becomes durable
// with the next completed sync, which TruncateTo starts itself: a crash
// before then may bring the removed batches back (never anything else), and
// the caller must then truncate again. Until that sync completes, appends
// are refused with ErrTruncationNotDurable, so that no crash can ever
// combine new batches with removed ones (see checkpoint_trust.go).
func (l *Log) TruncateTo(offset int64) error {
	if err := l.usable(); err != nil {
		return err
	}
	if offset < l.startOffset {
		return fmt.Errorf("%w: cannot truncate to %d below the start %d", ErrOffsetOutOfRange, offset, l.startOffset)
	}
	if offset >= l.endOffset {
		return nil
	}
	i := l.segmentIndexFor(offset)
	s := l.segments[i]
	position, _, end, err := s.locate(offset)
	if errors.Is(err, errBadData) {
		return fmt.Errorf("%w: segment %d: %v", ErrCorrupt, s.baseOffset, err)
	}
	if err != nil {
		return err
	}
	if end <= l.startOffset {
		// Nothing is left: a restart at the start, whose fence holds
		// appends until a checkpoint records it. A cut would also drop
		// the epoch the start was moved onto (truncateFromEnd), which
		// only that checkpoint makes durable; an older epoch's batch
		// taken meanwhile was refused by recovery after a crash, back
		// at an older start among the dropped epoch's batches (log seed
		// 3695276).
		return l.truncateFullyAndStartAt(l.startOffset)
	}
	if err := s.cut(position, end, l.config.IndexIntervalBytes); err != nil {
		// The segment's state is half rebuilt: only recovery can be
		// trusted to finish the job.
		l.halt(fmt.Errorf("log: truncation of segment %d failed: %w", s.baseOffset, err))
		return err
	}
	l.deleteSegments(l.segments[i+1:])
	l.segments = l.segments[:i+1]
	// The segment is active again. Its index files on disk, if it was
	// sealed, are stale until it seals again; recovery never trusts them
	// meanwhile, because it is the last segment or below no durable
	// recovery point.
	s.sealed = false
	s.activeSince = l.world.Clock.Elapsed()
	l.endOffset = end
	l.epochs.truncateFromEnd(end)
	l.lowerSynced(end)
	l.lowerCleanerOffset(end)
	l.logger().Debug("truncated", "offset", offset, "end", l.endOffset)
	l.truncated()
	l.checkInvariants()
	l.Sync()
	return nil
}

// TruncateFullyAndStartAt empties the log and restarts it, empty, at start
// (which may lie beyond the old end), as Kafka's truncateFullyAndStartAt
// does: a follower whose log the leader's start has left behind, or a node
// that installed a snapshot, continues from there. It is durable once a
// completed sync has written a checkpoint with the new start (see
// WhenDurable). Until then the files of the old segments wholly below
// start stay on disk (restartLeftovers), and the one that straddles start
// stays too, cut at start (keepCutBelow), so a crash sends recovery back
// to the old start with the old log as it was below start, as far as
// synced: a follower in the ISR must not come back shorter than the log
// it had reported (cluster seed 2985856, where one restarted at its end
// came back empty at 0 and, as leader, wrote again at offsets already
// acknowledged; and 72609, where one restarted inside its log came back
// empty below its high watermark). The other old segments go at once,
// what they hold at or above start being cut (one may have the new
// segment's name); a compaction swap not yet finished is cancelled, its
// old segments kept if wholly below start, deleted otherwise. Appends
// wait until the checkpoint, as after TruncateTo, however many rounds a
// full disk refuses it (restartedStart).
//
// A restart inside a segment a compaction swap has not finished putting
// on disk is refused with ErrSwapNotFinished until the sync round that
// finishes the swap has completed: the old segments, which a crash would
// bring back, cannot be cut at start, and deleting them took the records
// below start with them.
//
// While a cut at the end (TruncateTo, an earlier restart, recovery) is
// not durable yet, a restart that would keep records is refused with
// ErrTruncationNotDurable, as an append is, and the caller tries again
// after the next sync: a file kept then could come back from a crash with
// the cut undone, reaching into the new log, and one deleted instead
// takes the synced records below start with it, which recovery needs if
// the crash comes before the restart's checkpoint (log seed 1172, which
// came back empty at its old start).
func (l *Log) TruncateFullyAndStartAt(start int64) error {
	if err := l.usable(); err != nil {
		return err
	}
	if start < 0 {
		return fmt.Errorf("%w: cannot start at negative offset %d", ErrOffsetOutOfRange, start)
	}
	if l.truncationPending && l.keepsRecordsBelow(start) {
		l.Sync() // make sure the sync that makes the cut durable is under way
		return fmt.Errorf("%w: a restart at %d would keep records below it", ErrTruncationNotDurable, start)
	}
	if s := l.swapStraddling(start); s != nil {
		l.Sync() // the round that finishes the swap
		return fmt.Errorf("%w: a restart at %d would cut segment [%d, %d)", ErrSwapNotFinished, start, s.baseOffset, s.endOffset)
	}
	return l.truncateFullyAndStartAt(start)
}

// swapStraddling returns the segment a compaction swap has not finished
// putting on disk that holds offsets of the log on both sides of start,
// if there is one. A restart there would have to keep what lies below
// start and cannot: until the swap commits, a crash brings back the old
// segments it was cleaned from, not the new one, and one of those may
// straddle start too; cancelling the swap deletes them all.
func (l *Log) swapStraddling(start int64) *segment {
	for _, s := range l.segments {
		if s.swap != nil && l.holdsBothSides(s, start) {
			return s
		}
	}
	return nil
}

// keepsRecordsBelow reports whether a restart at start would keep a
// segment that holds records (see keepBelowUntilRestartDurable).
func (l *Log) keepsRecordsBelow(start int64) bool {
	for _, s := range l.segments {
		if s.endOffset > s.baseOffset && (s.leftover().whollyBelow(start) || l.straddles(s, start)) {
			return true
		}
	}
	return false
}

// straddles reports whether a restart at start keeps s cut at start
// (keepCutBelow): s holds records of the log on both sides of start, and
// no compaction swap is replacing it (such a restart waits for the swap:
// swapStraddling).
func (l *Log) straddles(s *segment, start int64) bool {
	return s.swap == nil && l.holdsBothSides(s, start)
}

// holdsBothSides reports whether s holds offsets of the log below start
// and at or above it.
func (l *Log) holdsBothSides(s *segment, start int64) bool {
	return s.baseOffset < start && start < s.endOffset && l.startOffset < start
}

func (l *Log) truncateFullyAndStartAt(start int64) error {
	if l.world.Canaries.On(CanaryRestartReusesSegmentName) {
		s, err := l.createSegment(start)
		if err != nil {
			return err
		}
		l.deleteSegments(l.segments)
		return l.restartedAt(start, s)
	}
	// The old segments at or above start go first: one of them may
	// begin at start, and its file has the new segment's name. Created
	// first, the new segment would open that file, and the removal of
	// the old ones would then take its name away, so that what it holds
	// is gone at the next crash. Those below start are kept on disk
	// until the restart is durable; so are an earlier restart's below
	// start, but not those at or above it, whose names the new log may
	// take. A log left without a segment cannot go on: the node stops,
	// and Open starts it again at the checkpointed start.
	l.keepBelowUntilRestartDurable(start)
	s, err := l.createSegment(start)
	if err != nil {
		err = fmt.Errorf("log: restarting at %d: %w", start, err)
		l.halt(err)
		return err
	}
	return l.restartedAt(start, s)
}

// keepBelowUntilRestartDurable takes every segment out of the log for a
// restart at start: the files of those wholly below start stay on disk as
// restartLeftovers (for a segment a compaction swap has not finished
// replacing, the files of the old segments it was cleaned from), and so
// does the one straddling start, cut there (keepCutBelow); the others are
// deleted now, so that no record at or above start, which the restart
// cuts, can come back after a round has completed, as none can after
// TruncateTo. While a truncation is not yet durable none is kept: a
// crash could undo the cut in a kept file, and recovery would bring back
// records the log had already given up; with every cut durable, a kept
// file can only come back as a prefix of the log the restart left. (A
// restart that would keep records then is refused before it comes here;
// TruncateTo's restart at the start has nothing wholly below it.)
func (l *Log) keepBelowUntilRestartDurable(start int64) {
	leftovers := l.restartLeftovers[:0]
	for _, left := range l.restartLeftovers {
		if left.whollyBelow(start) { // an earlier restart's
			leftovers = append(leftovers, left)
		} else {
			l.removeSegmentFiles(left.base)
		}
	}
	for _, s := range l.segments {
		switch {
		case l.truncationPending || l.world.Canaries.On(CanaryRestartDropsOldLog):
			// A cut to be undone (or the planted bug: nothing kept).
			l.deleteSegments([]*segment{s})
		case l.straddles(s, start):
			if left, kept := l.keepCutBelow(s, start); kept {
				leftovers = append(leftovers, left)
			}
		case !s.leftover().whollyBelow(start):
			// The new segment's name (an empty segment at start), or
			// records the restart cuts.
			l.deleteSegments([]*segment{s})
		case s.swap != nil:
			s.file.Close()
			leftovers = append(leftovers, l.cancelSwapKeepingBelow(s.swap, start)...)
		default:
			s.file.Close()
			leftovers = append(leftovers, s.leftover())
		}
	}
	l.restartLeftovers = leftovers
	l.segments = nil
}

// keepCutBelow cuts s, which straddles start, where its records reach
// start, and keeps what lies below as a leftover, as if it had ended
// there: a follower restarting inside its log must still come back, after
// a crash before the restart's checkpoint, with what it had reported
// below start (cluster seed 72609, where the whole segment went and a
// replica in the ISR came back empty below the high watermark and was
// elected). The cut file is synced by the next round, before that round
// writes the checkpoint that makes the restart durable, so no crash can
// leave the checkpoint's start with the cut undone; the other way round,
// the cut undone before the checkpoint, recovery finds the old segment
// reaching past the new one's base and deletes the new one, and the old
// log comes back whole, as after a crash before a TruncateTo. Its index
// files go: they describe the uncut segment. It reports false, having
// deleted s, when nothing lies below start or the cut fails.
func (l *Log) keepCutBelow(s *segment, start int64) (restartLeftover, bool) {
	position, _, previousEnd, err := s.locate(start)
	if err == nil && position == 0 {
		l.deleteSegments([]*segment{s}) // nothing lies below start
		return restartLeftover{}, false
	}
	if err == nil {
		err = s.cut(position, previousEnd, l.config.IndexIntervalBytes)
	}
	if err != nil {
		l.logger().Warn("restart could not keep the records below its start", "segment", s.baseOffset, "start", start, "error", err)
		l.deleteSegments([]*segment{s})
		return restartLeftover{}, false
	}
	l.removeFile(offsetIndexPath(l.dir, s.baseOffset))
	l.removeFile(timeIndexPath(l.dir, s.baseOffset))
	l.filesToSync = append(l.filesToSync, s.file)
	return restartLeftover{base: s.baseOffset, end: previousEnd}, true
}

// restartLeftover is an old segment a restart kept on disk: its name and
// where its records end.
type restartLeftover struct{ base, end int64 }

func (s *segment) leftover() restartLeftover {
	return restartLeftover{base: s.baseOffset, end: s.endOffset}
}

// whollyBelow reports whether a restart at start may keep the segment: it
// holds nothing the restart cuts, and its name is not the new segment's
// (an empty segment at start ends there too).
func (left restartLeftover) whollyBelow(start int64) bool {
	return left.base < start && left.end <= start
}

// removeRestartLeftovers deletes what a restart kept on disk once no crash
// can send recovery back before it.
func (l *Log) removeRestartLeftovers() {
	for _, left := range l.restartLeftovers {
		l.removeSegmentFiles(left.base)
	}
	l.restartLeftovers = nil
}

// restartedAt makes s, a new empty segment at start, the whole log.
func (l *Log) restartedAt(start int64, s *segment) error {
	l.segments = []*segment{s}
	l.startOffset, l.endOffset = start, start
	l.epochs = epochCache{}
	s.dirty = true
	l.lowerSynced(start)
	l.lowerCleanerOffset(start)
	l.logger().Debug("truncated fully", "start", start)
	l.truncated()
	l.checkpointBeforeRestart = l.checkpointWriting
	if l.DurableStartOffset() == start && (l.checkpointWriting == nil || l.checkpointWriting.startOffset == start) {
		// At the durable start, with no checkpoint of another start on
		// its way to disk, a crash sends recovery here: no checkpoint
		// is due, and the truncation fence is enough. An earlier
		// restart's fence goes too: it waited for a checkpoint at that
		// restart's start, which this log will never write. The old
		// segments kept lie below the durable start, where recovery
		// would delete them.
		l.restartedStart = -1
		l.removeRestartLeftovers()
	} else {
		// A crash would send recovery to another start, with the
		// segments of this one gone: fenced until a checkpoint says
		// start.
		l.restartedStart = start
	}
	l.checkInvariants()
	l.Sync()
	return nil
}
