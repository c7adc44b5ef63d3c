package log

import (
	"errors"
	"fmt"
	"math"
	"time"

	"sluice/core"
	"sluice/core/batch"
)

// segment is one file of the log, Kafka's LogSegment: batches back to back
// from baseOffset, with its offset and time indexes held in memory. Only the
// last segment (the active one) is appended to; the others are sealed, and
// their indexes are also on disk, written and synced when they rolled.
//
// Invariant: bytes is the size of the whole batches the file holds, and
// endOffset is the offset after the last of them (baseOffset when empty).
// Batch offsets increase but may skip: compaction removes whole batches
// (see compaction.go), though never a segment's last one.
type segment struct {
	baseOffset int64
	file       core.File
	reads      *readBuffer

	bytes     int64
	endOffset int64

	// sizeOnDisk is the file's size when Open found it.
	sizeOnDisk int64

	offsets offsetIndex
	times   timeIndex

	// maxTimestamp is the largest batch max timestamp in the segment
	// (noTimestamp if none), and offsetOfMaxTimestamp the batch holding it;
	// retention by age and OffsetForTimestamp use them.
	maxTimestamp         int64
	offsetOfMaxTimestamp int64

	// bytesSinceIndexEntry counts the batch bytes appended since the last
	// offset index entry, as Kafka's bytesSinceLastIndexEntry does.
	bytesSinceIndexEntry int64

	// activeSince is Clock.Elapsed when the segment became active, for
	// rolling by SegmentAge when its first batch has no timestamp.
	activeSince time.Duration

	// rollJitter is how much earlier than the roll age this segment rolls
	// (segment.jitter.ms), drawn when it was created or opened.
	rollJitter time.Duration

	// firstBatchTimestamp is the max timestamp of the segment's first
	// batch (noTimestamp if it has none, or it could not be read), Kafka's
	// rollingBasedTimestamp: SegmentAge and MaxCompactionLag are judged
	// from it, in record time. firstBatchTimestampKnown says it was
	// recorded with the batch or read back (firstTimestamp): a segment
	// loaded from its index files did not replay its first batch.
	firstBatchTimestamp      int64
	firstBatchTimestampKnown bool

	// sealed: rolled, with index files written (the next sync covers them).
	sealed bool

	// dirty: written or truncated since its last sync began.
	dirty bool

	// swap is set while the segment is a compaction's output whose files
	// have not yet replaced, on disk, the segments it was cleaned from
	// (see compaction_swap.go); its file is then not yet <base>.log.
	swap *segmentSwap

	// mayHaveGaps: compaction wrote the segment, or may have (it is in a
	// log that is or was compacted), so its batches need not follow one
	// another offset by offset. A base offset lies outside the CRC, and
	// where a gap may be, continuity cannot tell it from a bit flipped in
	// flight that lands exactly on the previous batch's end: readers then
	// confirm every base offset with a second read (batchReader).
	mayHaveGaps bool
}

// startReader starts r reading the segment's batches from position, where
// a batch starting at nextOffset is expected (see batchReader.start). The
// segment's batches are known, so none reaches its end offset.
func (s *segment) startReader(r *batchReader, position, nextOffset int64, chunkBytes int, buffer []byte) {
	r.start(s.file, position, s.bytes, nextOffset, s.endOffset, chunkBytes, buffer)
	r.rereads = &s.reads.rereads
	r.confirmEveryOffset = s.mayHaveGaps
	if s.isIndexEntry(position, nextOffset) {
		r.entryPosition, r.index = position, &s.offsets
	}
}

// isIndexEntry reports whether the offset index has the entry (offset,
// position): the batch at position starts at offset. The implicit entry at
// the segment's start is not one: compaction may have emptied its first
// offsets.
func (s *segment) isIndexEntry(position, offset int64) bool {
	return position > 0 && s.offsets.lookup(offset) == offsetEntry{offset: offset, position: position}
}

func newSegment(baseOffset int64, file core.File, reads *readBuffer) *segment {
	s := &segment{baseOffset: baseOffset, file: file, reads: reads}
	s.offsets = offsetIndex{baseOffset: baseOffset}
	s.times = timeIndex{baseOffset: baseOffset}
	s.restartAt(offsetEntry{offset: baseOffset, position: 0})
	return s
}

// restartAt rewinds the segment's running state to just before the batch
// at entry, keeping the index entries before it. Replaying the batches from
// there with record rebuilds exactly the state appending them built:
// bytesSinceIndexEntry restarts at zero as it did right after the entry was
// added, and the last time index entry carries the largest timestamp of the
// batches up to it.
func (s *segment) restartAt(entry offsetEntry) {
	if entry.position == 0 {
		// Recorded again with the first batch.
		s.firstBatchTimestamp, s.firstBatchTimestampKnown = noTimestamp, false
	}
	s.bytes = entry.position
	s.endOffset = entry.offset
	s.bytesSinceIndexEntry = 0
	last := s.times.last()
	s.maxTimestamp, s.offsetOfMaxTimestamp = last.timestamp, last.offset
}

// record takes note of a batch written at position: the bookkeeping of
// Kafka's LogSegment.append, shared by appends, recovery and replays.
func (s *segment) record(h batch.Header, position int64, indexIntervalBytes int) {
	if h.BaseOffset < s.endOffset || position != s.bytes {
		panic(fmt.Sprintf("log: segment %d: batch at offset %d position %d does not follow end %d size %d",
			s.baseOffset, h.BaseOffset, position, s.endOffset, s.bytes))
	}
	if h.MaxTimestamp > s.maxTimestamp {
		s.maxTimestamp, s.offsetOfMaxTimestamp = h.MaxTimestamp, h.BaseOffset
	}
	if position == 0 {
		s.firstBatchTimestamp, s.firstBatchTimestampKnown = h.MaxTimestamp, true
	}
	if s.bytesSinceIndexEntry > int64(indexIntervalBytes) {
		s.offsets.add(h.BaseOffset, position)
		s.times.maybeAdd(s.maxTimestamp, s.offsetOfMaxTimestamp)
		s.bytesSinceIndexEntry = 0
	}
	s.bytesSinceIndexEntry += int64(h.Size())
	s.bytes += int64(h.Size())
	s.endOffset = h.NextOffset()
}

// checkRecordable reports bad data if recording h would break the time
// index's order. That happens only when entries loaded from a damaged index
// file disagree with the batches, never for batches the log appended itself,
// so it must not panic as the assertion in maybeAdd would.
func (s *segment) checkRecordable(h batch.Header, indexIntervalBytes int) error {
	if s.bytesSinceIndexEntry <= int64(indexIntervalBytes) || len(s.times.entries) == 0 {
		return nil
	}
	timestamp, offset := s.maxTimestamp, s.offsetOfMaxTimestamp
	if h.MaxTimestamp > timestamp {
		timestamp, offset = h.MaxTimestamp, h.BaseOffset
	}
	if last := s.times.last(); timestamp > last.timestamp && offset <= last.offset {
		return fmt.Errorf("%w: segment %d: time index entry (%d, %d) disagrees with the batches", errBadData, s.baseOffset, last.timestamp, last.offset)
	}
	return nil
}

// offsetReach is the offset after the farthest any batch of the segment
// may hold: appends and compaction keep every batch within
// relativeOffsetMax of the base, where the indexes can reach.
func (s *segment) offsetReach() int64 {
	if s.baseOffset > math.MaxInt64-relativeOffsetMax-1 {
		return math.MaxInt64
	}
	return s.baseOffset + relativeOffsetMax + 1
}

// canHold reports whether a batch range ending at lastOffset, of the given
// size and largest max timestamp, may go into this segment rather than a
// fresh one.
func (s *segment) canHold(lastOffset, bytes, maxTimestamp int64, config Config, now time.Duration) bool {
	if s.bytes == 0 {
		return true // an empty segment takes anything: rolling would not help
	}
	return s.bytes+bytes <= config.SegmentBytes &&
		!s.dueToRoll(maxTimestamp, config, now) &&
		lastOffset-s.baseOffset <= relativeOffsetMax &&
		!config.indexesFull(len(s.offsets.entries), len(s.times.entries))
}

// dueToRoll reports whether SegmentAge (segment.ms; max.compaction.lag.ms
// where shorter on a compacted log; less the segment's jitter) has run
// out for the segment when batches whose largest timestamp is incoming
// arrive. As Kafka's LogSegment.shouldRoll judges it: in record time, from
// the first batch's max timestamp to the incoming one, so a restart does
// not start it over, and a backfill of old records rolls as their
// timestamps advance; only a segment whose first batch has no timestamp
// is judged by how long it has been active in this process.
func (s *segment) dueToRoll(incoming int64, config Config, now time.Duration) bool {
	age := config.rollAge() - s.rollJitter
	if first := s.firstTimestamp(); first != noTimestamp {
		return incoming-first > age.Milliseconds()
	}
	return now-s.activeSince >= age
}

// firstTimestamp is the max timestamp of the segment's first batch,
// read back the first time it is asked for if the batch was not replayed
// (Kafka's loadFirstBatchTimestamp). A read that fails leaves it
// noTimestamp: the segment then rolls by its time active, and never makes
// compaction overdue.
func (s *segment) firstTimestamp() int64 {
	if s.firstBatchTimestampKnown || s.bytes == 0 {
		return s.firstBatchTimestamp
	}
	s.firstBatchTimestampKnown = true
	_ = withRereads(func() error {
		var r batchReader
		s.startReader(&r, 0, s.baseOffset, scanChunkBytes, s.reads.bytes)
		defer func() { s.reads.keep(r.buffer) }()
		if r.next() {
			s.firstBatchTimestamp = r.header.MaxTimestamp
			return nil
		}
		return r.err
	})
	return s.firstBatchTimestamp
}

// readForward reads and records the batches from the segment's current
// end up to limit, checking each (see batchReader). visit, when not nil,
// sees each batch before it is recorded and may refuse it with errBadData.
// On bad data the segment's state covers the batches before the bad one,
// so a retry resumes there, with suspect set: the first batch is then
// believed only once re-reads agree with it (batchReader.suspect).
func (s *segment) readForward(limit int64, indexIntervalBytes int, verifyCRC bool, visit func(h batch.Header, position int64) error, suspect bool) error {
	var r batchReader
	// The batches from here on are what this finds out; none can reach
	// past what the segment's indexes can hold (see canHold).
	r.start(s.file, s.bytes, limit, s.endOffset, s.offsetReach(), scanChunkBytes, s.reads.bytes)
	r.rereads = &s.reads.rereads
	defer func() { s.reads.keep(r.buffer) }()
	if s.isIndexEntry(s.bytes, s.endOffset) {
		r.entryPosition = s.bytes // restarted at an entry (restartAt)
	}
	r.verifyCRC = verifyCRC
	r.suspect = suspect
	r.confirmEveryOffset = s.mayHaveGaps
	for r.next() {
		if s.offsets.full() || s.times.full() {
			return fmt.Errorf("%w: segment %d has more batches than its index holds", errBadData, s.baseOffset)
		}
		if err := s.checkRecordable(r.header, indexIntervalBytes); err != nil {
			return err
		}
		if visit != nil {
			if err := visit(r.header, r.currentPosition); err != nil {
				return err
			}
		}
		s.record(r.header, r.currentPosition, indexIntervalBytes)
	}
	return r.err
}

// readForwardRereading is readForward that reads again from a batch that
// failed, or that visit refused (a check against what recovery read
// elsewhere, which a flip in flight can fail too), before believing it:
// only readAttemptsMax failures in a row at the same batch count. The
// batch read again is suspect, and believed only once re-reads agree.
func (s *segment) readForwardRereading(limit int64, indexIntervalBytes int, verifyCRC bool, visit func(h batch.Header, position int64) error) error {
	failures := 0
	for {
		before := s.bytes
		err := s.readForward(limit, indexIntervalBytes, verifyCRC, visit, failures > 0)
		if err == nil || !errors.Is(err, errBadData) {
			return err
		}
		if s.bytes > before {
			failures = 0
		}
		failures++
		if failures >= readAttemptsMax {
			return err
		}
	}
}

// locate finds the batch holding offset, which must lie in the segment, or
// if compaction removed that offset, the first batch after it: its position
// and base offset, and previousEnd, the offset after the batch before it
// (the segment's base offset if it is the first). Without gaps previousEnd
// is the batch's base offset.
func (s *segment) locate(offset int64) (position, baseOffset, previousEnd int64, err error) {
	err = withRereads(func() error {
		// Start one index entry early: the batch before the one found may
		// end below the found one's base (a gap), and only reading it
		// tells where. Batches before the entry found all end below
		// offset, so the reader passes at least one of them unless it
		// starts at the segment's start.
		entry := s.offsets.lookup(offset)
		if entry.position > 0 {
			entry = s.offsets.lookup(entry.offset - 1)
		}
		var r batchReader
		s.startReader(&r, entry.position, entry.offset, scanChunkBytes, s.reads.bytes)
		defer func() { s.reads.keep(r.buffer) }()
		previous := s.baseOffset
		for r.next() {
			if r.header.LastOffset() >= offset {
				position, baseOffset, previousEnd = r.currentPosition, r.header.BaseOffset, previous
				return nil
			}
			previous = r.header.NextOffset()
		}
		if r.err != nil {
			return r.err
		}
		return fmt.Errorf("%w: offset %d not found in segment %d", errBadData, offset, s.baseOffset)
	})
	return position, baseOffset, previousEnd, err
}

// cut drops the batches from position on (a batch boundary; previousEnd is
// the offset after the batch before it): the file is truncated and the
// in-memory state rebuilt by replaying from the last index entry that
// survives.
func (s *segment) cut(position, previousEnd int64, indexIntervalBytes int) error {
	if position < 0 || position > s.bytes {
		panic(fmt.Sprintf("log: segment %d cut at %d outside [0, %d]", s.baseOffset, position, s.bytes))
	}
	s.offsets.truncateFromPosition(position)
	s.times.truncateFromOffset(previousEnd)
	s.restartAt(s.offsets.last())
	if err := s.readForwardRereading(position, indexIntervalBytes, true, nil); err != nil {
		return err
	}
	if s.bytes != position || s.endOffset != previousEnd {
		panic(fmt.Sprintf("log: segment %d replay ended at (%d, %d), cut was (%d, %d)", s.baseOffset, s.endOffset, s.bytes, previousEnd, position))
	}
	if err := s.file.Truncate(position); err != nil {
		return err
	}
	s.dirty = true
	return nil
}

// seal closes the segment for appends: its final time index entry records
// its largest timestamp, so a sealed segment's age is its last entry.
func (s *segment) seal() {
	s.times.maybeAdd(s.maxTimestamp, s.offsetOfMaxTimestamp)
	s.sealed = true
}
