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
// combine new batches with removed ones (see sync.go).
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
	if end < l.startOffset {
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
// WhenDurable): the old segments are gone at once, and a crash before then
// sends recovery back to the old start, with nothing kept. Appends wait
// until then, as after TruncateTo, however many rounds a full disk
// refuses the checkpoint (restartedStart).
func (l *Log) TruncateFullyAndStartAt(start int64) error {
	if err := l.usable(); err != nil {
		return err
	}
	if start < 0 {
		return fmt.Errorf("%w: cannot start at negative offset %d", ErrOffsetOutOfRange, start)
	}
	return l.truncateFullyAndStartAt(start)
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
	// The old segments go first: one of them may begin at start, and
	// its file has the new segment's name. Created first, the new
	// segment would open that file, and the removal of the old ones
	// would then take its name away, so that what it holds is gone at
	// the next crash. A log left without a segment cannot go on: the
	// node stops, and Open starts it again at the checkpointed start.
	l.deleteSegments(l.segments)
	l.segments = nil
	s, err := l.createSegment(start)
	if err != nil {
		err = fmt.Errorf("log: restarting at %d: %w", start, err)
		l.halt(err)
		return err
	}
	return l.restartedAt(start, s)
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
		// restart's start, which this log will never write.
		l.restartedStart = -1
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
