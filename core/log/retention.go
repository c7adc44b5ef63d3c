package log

import (
	"fmt"
	"sort"
)

// Moving the start offset up (AdvanceStartOffset, retention) never deletes
// a file at once. The segments wholly below the new start are condemned:
// readers can no longer reach them, but their files stay until a checkpoint
// recording the new start is durable, and only then are they removed (see
// finishRound). So on disk the first segment always holds the durable
// checkpoint's start offset, and recovery can tell a front that was
// deliberately deleted from one a failed sync lost: without this order, a
// crash could keep the deletion of one front segment and lose that of the
// one before it, and recovery would take the hole for a gap and cut away
// the synced log after it.

// AdvanceStartOffset moves the log start offset up to offset (Kafka's
// DeleteRecords): reads below it are refused from now on, the epoch cache
// forgets epochs wholly below it, and the segments wholly below it are
// deleted once the new start is durable, which the sync it starts sees to.
// It never moves the start back; an offset above EndOffset is
// ErrOffsetOutOfRange. A crash before that sync completes may bring the old
// start back.
func (l *Log) AdvanceStartOffset(offset int64) error {
	if err := l.usable(); err != nil {
		return err
	}
	if offset > l.endOffset {
		return fmt.Errorf("%w: start %d above the end %d", ErrOffsetOutOfRange, offset, l.endOffset)
	}
	if offset <= l.startOffset {
		return nil
	}
	l.moveStart(offset)
	l.checkInvariants()
	return nil
}

// ApplyRetention enforces the retention settings, as Kafka's log retention
// task does periodically: it first rolls the active segment if it is older
// than SegmentAge, then removes the oldest segments while either the
// largest timestamp in them is older than RetentionAge (judged against
// Clock.Now; segments with no timestamps are not aged out) or the log
// without them would still hold at least RetentionBytes. It never removes
// a segment holding an offset at or above upTo: a partition passes its
// high watermark, so retention never deletes what a follower or a
// consumer may still need to read as committed. When every sealed segment
// goes and the active one's records are due too, all below upTo, the
// active segment is rolled and goes as well (activeExpires). The log start
// moves up to the first remaining segment, and the files go as
// AdvanceStartOffset's do. It reports how many segments it removed.
func (l *Log) ApplyRetention(upTo int64) (segmentsRemoved int) {
	if l.usable() != nil {
		return 0
	}
	if active := l.active(); active.bytes > 0 && l.world.Clock.Elapsed()-active.activeSince >= l.config.SegmentAge {
		if err := l.roll(); err != nil {
			l.logger().Warn("retention could not roll the active segment", "error", err)
		}
	}
	nowMilliseconds := l.world.Clock.Now().UnixMilli()
	first := l.condemned()
	total := l.Size()
	removable := 0
	for first+removable < len(l.segments)-1 {
		s := l.segments[first+removable]
		if l.segments[first+removable+1].baseOffset > upTo {
			// The segment holds offsets at or above upTo, which the
			// caller still needs (Kafka bounds retention by the high
			// watermark: a follower may not have them yet).
			break
		}
		if !l.pastRetention(s, total, nowMilliseconds) {
			break
		}
		total -= s.bytes
		removable++
	}
	if first+removable == len(l.segments)-1 && l.activeExpires(upTo, total, nowMilliseconds) {
		// Every sealed segment goes, and so does the active one's
		// content: rolled first, as Kafka's deleteSegments rolls when
		// every segment is deletable, so the log keeps an empty active
		// segment at its end.
		if err := l.roll(); err != nil {
			l.logger().Warn("retention could not roll the active segment", "error", err)
		} else {
			removable++
		}
	}
	if removable == 0 {
		return 0
	}
	l.moveStart(max(l.startOffset, l.segments[first+removable].baseOffset))
	l.logger().Debug("retention removed segments", "count", removable, "start", l.startOffset)
	l.checkInvariants()
	return removable
}

// activeExpires reports whether the active segment's records are past
// retention (total is what the log holds without the segments already
// judged removable) while every one of them is below upTo, the high
// watermark: a quiet topic's records expire although no append rolled
// their segment, as in Kafka (deletableSegments takes the active segment
// when the high watermark is at the log end), and retention.bytes 0
// empties the log.
func (l *Log) activeExpires(upTo, total, nowMilliseconds int64) bool {
	active := l.active()
	return active.bytes > 0 && upTo >= l.endOffset && l.pastRetention(active, total, nowMilliseconds)
}

// pastRetention reports whether segment s may go by the retention
// settings, total being what the log holds with it: its newest record is
// older than RetentionAge (a segment without timestamps never is), or the
// log would still hold RetentionBytes without it.
func (l *Log) pastRetention(s *segment, total, nowMilliseconds int64) bool {
	expired := l.config.RetentionAge != Unlimited && s.maxTimestamp > noTimestamp &&
		nowMilliseconds-s.maxTimestamp > l.config.RetentionAge.Milliseconds()
	oversized := l.config.RetentionBytes != Unlimited && total-s.bytes >= l.config.RetentionBytes
	return expired || oversized
}

// moveStart sets a higher start offset, trims the epoch cache, and starts
// the sync whose checkpoint lets the condemned segments go.
func (l *Log) moveStart(offset int64) {
	l.startOffset = offset
	l.epochs.truncateFromStart(offset)
	l.Sync()
}

// condemned counts the leading segments wholly below the start offset.
func (l *Log) condemned() int { return l.segmentsEndingBy(l.startOffset) }

// segmentsEndingBy counts the leading segments that end at or below offset.
// The active segment is never counted.
func (l *Log) segmentsEndingBy(offset int64) int {
	// Segment i ends where segment i+1 starts.
	after := sort.Search(len(l.segments), func(i int) bool { return l.segments[i].baseOffset > offset })
	return max(after-1, 0)
}

// removeCondemned deletes the files of the segments wholly below a start
// offset that a durable checkpoint records.
func (l *Log) removeCondemned(durableStart int64) {
	n := l.segmentsEndingBy(durableStart)
	if n == 0 {
		return
	}
	l.deleteSegments(l.segments[:n])
	l.segments = l.segments[n:]
}
