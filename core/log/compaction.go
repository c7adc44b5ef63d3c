package log

import (
	"fmt"
	"sort"

	"sluice/core/batch"
)

// Log compaction (cleanup.policy=compact) keeps, for every key, at least
// the latest record, and removes the records a later one with the same key
// supersedes. It is Kafka's log cleaner (the "Log Compaction" section of
// Kafka's documentation; LogCleaner.scala), run in bounded steps from the
// node's loop instead of on cleaner threads:
//
//   - The log is split at the cleaner offset (Kafka's cleaner checkpoint)
//     into a clean section, below it, which earlier passes have compacted,
//     and a dirty section above it. Only sealed segments wholly below the
//     caller's UpTo (the high watermark: nothing that could still be
//     truncated) are cleanable, and among the dirty ones only those whose
//     records are all older than MinCompactionLag. The active segment
//     never is.
//   - A pass starts when the dirty section is more than
//     MinCleanableDirtyRatio of the cleanable bytes. It builds an offset
//     map, key -> offset of its latest record, over the dirty section
//     (bounded: it may stop early, and the next pass goes on from there).
//   - Then it rewrites the segments from the log start to the map's end,
//     group by group (consecutive segments together no bigger than a
//     segment), keeping a record unless the map holds a later offset for
//     its key, it has no key (Kafka refuses keyless records on compacted
//     topics at produce time and its cleaner drops any it meets), or it is
//     a tombstone (null value) old enough to go (below).
//   - A batch keeps its base offset, last offset delta, epoch and producer
//     fields; if some of its records go it is rewritten with the rest,
//     whose offsets then skip (consumers skip the gaps, as with Kafka). A
//     batch left with no records is dropped, except three kinds, kept
//     empty: the last batch of a producer the caller still tracks (as
//     Kafka keeps it, so that the producer's last sequence number
//     survives in the log for idempotence, KAFKA-5793); the first batch of
//     a leader epoch, so that the epoch boundaries survive in the log
//     itself; and the last batch of the group, kept so that the new
//     segment ends exactly where the old ones did: segment ranges stay
//     contiguous, which recovery relies on (open.go).
//   - Why the epoch boundaries: a replica that copies a compacted log
//     learns its epochs from the batches it is sent. Had an epoch's only
//     batch gone, the copy would not know the epoch, and, leading later,
//     it would tell a follower holding that batch (committed, below the
//     follower's high watermark) that its log diverged where the epoch
//     began, and the follower would cut committed records (Kafka's
//     cleaner drops such batches, and its followers then truncate below
//     the high watermark with a warning; seed cluster-panic-427753).
//   - Each group is written as a new segment and the log switches to it in
//     memory at once; the sync rounds then swap it in on disk, crash-safely
//     (compaction_swap.go). Once a pass has finished and its segments are
//     durable, the cleaner offset, recorded in the checkpoint, moves to the
//     map's end.
//
// Tombstones. A tombstone is removed only if it was already below the
// cleaner offset when the pass began - an earlier pass had it in its map
// and so removed every older record of its key - and its segment's largest
// timestamp is older than DeleteRetention: consumers get that long to see
// the delete. (Kafka 3.1 and later record a per-batch delete horizon
// instead, KIP-534; this is the segment-age rule of earlier versions, with
// record timestamps standing in for file modification times.)
//
// Compressed batches are looked into with World.Codecs. Without Codecs
// they are left as they are; their records never supersede others, and no
// tombstone after one is removed, since the batch might hold an older
// record of its key.
//
// Offsets never change and never repeat: a read of an offset compaction
// removed returns the next batch, as Kafka's does.

// CompactOptions are what the caller of Compact knows and the log does not.
type CompactOptions struct {
	// UpTo bounds compaction: only segments wholly below it are
	// compacted. A replica passes its high watermark, as Kafka's cleaner
	// stops at the last stable offset: a record may only be removed
	// because of a later one that can never be truncated away. The caller
	// must therefore never truncate below an UpTo it has passed.
	UpTo int64

	// ProducerLastOffsets returns the last offset of the last batch of
	// each idempotent producer the caller still tracks (Kafka's active
	// producers), by producer id. That batch is kept, if need be without
	// records. Compact calls it only when it starts a pass, which keeps
	// the map for its later calls: most calls start none, and need not
	// have it built. Nil tracks none.
	ProducerLastOffsets func() map[int64]int64
}

// CompactionResult says what one Compact call did.
type CompactionResult struct {
	// PassStarted: this call began a pass and built its offset map.
	PassStarted bool
	// PassFinished: this call finished a pass; the cleaner offset moved.
	PassFinished bool

	// SegmentsRewritten counts the old segments replaced by compacted ones.
	SegmentsRewritten int
	BytesRead         int64
	BytesWritten      int64

	// RecordsRemoved counts records superseded by a later one with the
	// same key, or without a key; TombstonesRemoved the tombstones that
	// were old enough to go; BatchesRemoved the batches that went whole.
	RecordsRemoved    int64
	TombstonesRemoved int64
	BatchesRemoved    int64
	// BatchesLeftIntact counts batches compaction could not look into:
	// compressed without Codecs, or with records it could not decode.
	BatchesLeftIntact int64
}

// cleanerPass is a compaction pass in progress, kept across Compact calls.
type cleanerPass struct {
	offsets offsetMap

	// dirtyStart is where the dirty section began: the cleaner offset
	// when the pass started (or the log start, if higher).
	dirtyStart int64
	// mapEnd is where the offset map ends: every keyed record in
	// [dirtyStart, mapEnd) is in it. The pass cleans the segments below.
	mapEnd int64
	// next is the base offset of the next group to clean.
	next int64

	// deleteHorizon: tombstones in segments whose largest timestamp is
	// below it (milliseconds) may be removed.
	deleteHorizon int64

	// intactSeen: an earlier batch of this pass could not be looked into,
	// so it may hold an older record of any key (see cleanBatch).
	intactSeen bool

	// producerLastOffsets is CompactOptions.ProducerLastOffsets's answer
	// when the pass started.
	producerLastOffsets map[int64]int64
}

// cleanerClaim is a finished pass's cleaner offset, which the checkpoint
// may record once every swap up to lastSwap is finished or cancelled.
type cleanerClaim struct {
	offset   int64
	lastSwap uint64
}

// CleanerOffset is Kafka's cleaner checkpoint: every record below it has
// been through a finished compaction pass.
func (l *Log) CleanerOffset() int64 { return l.cleanerOffset }

// Compact runs one bounded step of log compaction (see above): it may
// start a pass and build its offset map, and it cleans segment groups of
// the pass in progress, reading roughly compactionReadBytesPerCallMax
// bytes at most. A caller calls it periodically, as Kafka's cleaner
// threads run; a pass spans as many calls as it needs. A new pass waits
// until the previous one's segments are in place on disk.
//
// Rewritten segments replace the old ones in memory at once and on disk
// with the next sync rounds, which Compact starts. A crash before that
// leaves the old segments, never a mix.
//
// An error means the pass was abandoned: ErrCorrupt when a segment failed
// its checks on every re-read, a disk error (core.ErrDiskFull) when the new
// segment could not be written. The log itself is unchanged by a failed
// step.
func (l *Log) Compact(options CompactOptions) (CompactionResult, error) {
	var result CompactionResult
	if err := l.usable(); err != nil {
		return result, err
	}
	if l.pass != nil && (options.UpTo < l.pass.mapEnd || l.endOffset < l.pass.mapEnd) {
		l.abandonPass(fmt.Sprintf("the log or UpTo moved below the offset map's end %d", l.pass.mapEnd))
	}
	budget := l.compactionBytesPerCall
	if l.pass == nil {
		if len(l.swaps) > 0 {
			return result, nil // the last pass's segments are not in place on disk yet
		}
		pass, err := l.startPass(options, &result, &budget)
		if err != nil || pass == nil {
			return result, err
		}
		l.pass = pass
		result.PassStarted = true
	}
	err := l.cleanGroups(&result, &budget)
	if result.SegmentsRewritten > 0 || result.PassFinished {
		l.checkInvariants()
		l.Sync()
	}
	return result, err
}

// startPass decides whether a pass is due and, if so, builds its offset
// map. It returns nil when no pass is due.
func (l *Log) startPass(options CompactOptions, result *CompactionResult, budget *int64) (*cleanerPass, error) {
	nowMilliseconds := l.world.Clock.Now().UnixMilli()
	dirtyStart := max(l.cleanerOffset, l.startOffset)
	end := l.cleanableEnd(options.UpTo, dirtyStart, nowMilliseconds)
	if dirtyStart >= end {
		return nil, nil
	}
	clean, dirty := l.cleanAndDirtyBytes(dirtyStart, end)
	// Kafka's test: the dirty share must exceed the ratio, unless
	// max.compaction.lag.ms has run out for some dirty segment.
	if dirty == 0 || float64(dirty)/float64(clean+dirty) <= l.config.MinCleanableDirtyRatio && !l.compactionOverdue(dirtyStart, end, nowMilliseconds) {
		return nil, nil
	}
	pass := &cleanerPass{
		offsets:       newOffsetMap(),
		dirtyStart:    dirtyStart,
		mapEnd:        dirtyStart,
		next:          l.segments[l.condemned()].baseOffset,
		deleteHorizon: nowMilliseconds - l.config.DeleteRetention.Milliseconds(),
	}
	if options.ProducerLastOffsets != nil {
		pass.producerLastOffsets = options.ProducerLastOffsets()
	}
	if err := l.buildOffsetMap(pass, end, result, budget); err != nil {
		return nil, err
	}
	l.logger().Debug("compaction pass started", "dirty start", dirtyStart, "map end", pass.mapEnd,
		"cleanable end", end, "keys", pass.offsets.count(), "clean bytes", clean, "dirty bytes", dirty)
	return pass, nil
}

// compactionOverdue reports whether a cleanable segment holding dirty
// offsets (from dirtyStart, below end) has a first batch older than
// MaxCompactionLag, which makes a pass due whatever the dirty ratio, as
// Kafka's LogCleanerManager.maxCompactionDelay does. A segment whose first
// batch has no timestamp never makes it due.
func (l *Log) compactionOverdue(dirtyStart, end, nowMilliseconds int64) bool {
	lag := l.config.MaxCompactionLag.Milliseconds()
	for _, s := range l.segments[l.condemned():] {
		if s.baseOffset >= end {
			break
		}
		if s.endOffset <= dirtyStart {
			continue
		}
		if first := s.firstTimestamp(); first != noTimestamp && nowMilliseconds-first > lag {
			return true
		}
	}
	return false
}

// cleanableEnd is the end of the cleanable segments: the sealed segments
// from the start that end at or below upTo, and, where they reach the
// dirty section, hold no record younger than MinCompactionLag.
func (l *Log) cleanableEnd(upTo, dirtyStart, nowMilliseconds int64) int64 {
	first := l.condemned()
	end := l.segments[first].baseOffset
	lagMilliseconds := l.config.MinCompactionLag.Milliseconds()
	for _, s := range l.segments[first : len(l.segments)-1] {
		if s.endOffset > upTo || !s.sealed {
			break
		}
		young := lagMilliseconds > 0 && s.maxTimestamp > nowMilliseconds-lagMilliseconds
		if s.endOffset > dirtyStart && young {
			break
		}
		end = s.endOffset
	}
	return end
}

// cleanAndDirtyBytes sums the bytes of the segments below end that lie in
// the clean section (ending at or below dirtyStart) and in the dirty one.
func (l *Log) cleanAndDirtyBytes(dirtyStart, end int64) (clean, dirty int64) {
	for _, s := range l.segments[l.condemned():] {
		if s.baseOffset >= end {
			break
		}
		if s.endOffset <= dirtyStart {
			clean += s.bytes
		} else {
			dirty += s.bytes
		}
	}
	return clean, dirty
}

// cleanGroups cleans the pass's next groups until the call's budget is
// spent (at least one group), and finishes the pass when none is left.
func (l *Log) cleanGroups(result *CompactionResult, budget *int64) error {
	pass := l.pass
	for cleaned := 0; ; cleaned++ {
		group := l.nextGroup(pass)
		if len(group) == 0 {
			l.finishPass(result)
			return nil
		}
		if *budget <= 0 && (cleaned > 0 || result.PassStarted) {
			return nil // the next call goes on
		}
		if err := l.cleanGroup(pass, group, result, budget); err != nil {
			l.abandonPass(err.Error())
			return err
		}
		pass.next = group[len(group)-1].endOffset
	}
}

// nextGroup returns the segments the pass cleans next, together: the
// consecutive sealed segments from pass.next that start below the map's
// end, no bigger together than a segment may be, and within what one
// segment's indexes can hold.
func (l *Log) nextGroup(pass *cleanerPass) []*segment {
	i := sort.Search(len(l.segments), func(i int) bool { return l.segments[i].baseOffset >= pass.next })
	i = max(i, l.condemned())
	var group []*segment
	bytes, entries := int64(0), 0
	for _, s := range l.segments[i:max(i, len(l.segments)-1)] { // never the active segment
		if s.baseOffset >= pass.mapEnd || !s.sealed || s.swap != nil {
			break
		}
		if len(group) > 0 {
			// A compacted segment holds no more index entries than
			// its sources did (see cleanedWriter), plus one each.
			tooBig := bytes+s.bytes > l.config.SegmentBytes
			tooManyEntries := entries+len(s.offsets.entries)+len(s.times.entries)+2 > indexEntriesMax
			tooWide := s.endOffset-1-group[0].baseOffset > relativeOffsetMax
			if tooBig || tooManyEntries || tooWide {
				break
			}
		}
		group = append(group, s)
		bytes += s.bytes
		entries += len(s.offsets.entries) + len(s.times.entries) + 2
	}
	return group
}

// finishPass moves the cleaner offset to the map's end. The checkpoint
// records it once the pass's swaps are all finished.
func (l *Log) finishPass(result *CompactionResult) {
	pass := l.pass
	l.pass = nil
	l.cleanerOffset = max(l.cleanerOffset, pass.mapEnd)
	l.cleanerClaim = &cleanerClaim{offset: pass.mapEnd, lastSwap: l.swapsCreated}
	l.settleCleanerOffset()
	result.PassFinished = true
	l.logger().Debug("compaction pass finished", "cleaner offset", l.cleanerOffset)
}

func (l *Log) abandonPass(reason string) {
	if l.pass == nil {
		return
	}
	l.logger().Info("compaction pass abandoned", "reason", reason, "map end", l.pass.mapEnd)
	l.pass = nil
}

// settleCleanerOffset lets the checkpoint record a finished pass's cleaner
// offset once every swap the pass created is finished or cancelled.
func (l *Log) settleCleanerOffset() {
	claim := l.cleanerClaim
	if claim == nil {
		return
	}
	for _, w := range l.swaps {
		if w.number <= claim.lastSwap {
			return
		}
	}
	l.cleanerOffsetSafe = max(l.cleanerOffsetSafe, claim.offset)
	l.cleanerClaim = nil
}

// lowerCleanerOffset is called when the log is cut at end: no record at or
// above end has been compacted any more, and a pass whose map reaches
// beyond end is void.
func (l *Log) lowerCleanerOffset(end int64) {
	l.cleanerOffset = min(l.cleanerOffset, end)
	l.cleanerOffsetSafe = min(l.cleanerOffsetSafe, end)
	if l.cleanerClaim != nil {
		l.cleanerClaim.offset = min(l.cleanerClaim.offset, end)
	}
	if l.pass != nil && l.pass.mapEnd > end {
		l.abandonPass(fmt.Sprintf("the log was truncated to %d", end))
	}
}

// isProducersLast reports whether h is the last batch of a producer the
// caller still tracks.
func (pass *cleanerPass) isProducersLast(h batch.Header) bool {
	if h.ProducerID == batch.NoProducerID {
		return false
	}
	last, tracked := pass.producerLastOffsets[h.ProducerID]
	return tracked && last == h.LastOffset()
}
