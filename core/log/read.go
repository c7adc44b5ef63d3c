package log

import (
	"errors"
	"fmt"

	"sluice/core"
	"sluice/core/batch"
)

// Read returns whole batches starting with the one that holds offset (or,
// if compaction removed offset, the first one after it), for a fetch. It stops before any batch whose base offset is at or above
// maxOffset (a fetch passes the high watermark), and at maxBytes, except
// that when atLeastOne is set the first batch is returned even if it alone
// is bigger (KIP-74), so a consumer can always make progress. The batches
// come from one segment; the caller reads on from the offset after them.
//
// Every batch returned, and the one it stops before, has passed its CRC,
// starts at or after the end of the previous one (a gap is confirmed by a
// second read, see batchReader), ends below its segment's end, and the
// batches returned carry the epoch the epoch cache expects, on this read:
// bytes that fail those checks on every re-read give ErrCorrupt and no
// bytes, so corrupt data is never served. An offset outside [StartOffset,
// EndOffset] gives ErrOffsetOutOfRange; EndOffset itself gives no bytes.
func (l *Log) Read(offset, maxOffset int64, maxBytes int, atLeastOne bool) ([]byte, error) {
	return l.read(offset, maxOffset, maxBytes, atLeastOne, false)
}

// ReadTransient is Read for a caller done with the answer before the log
// reads again, such as a replay that looks once at each batch's header:
// the answer may lie in the log's own read buffer, which the log's next
// read of any kind overwrites. Such a read is not remembered for the next
// Read either (see knownBatches): a log that is only replayed, as a
// follower's is at Open, is never fetched from.
func (l *Log) ReadTransient(offset, maxOffset int64, maxBytes int, atLeastOne bool) ([]byte, error) {
	return l.read(offset, maxOffset, maxBytes, atLeastOne, true)
}

func (l *Log) read(offset, maxOffset int64, maxBytes int, atLeastOne, transient bool) ([]byte, error) {
	if err := l.usable(); err != nil {
		return nil, err
	}
	if offset < l.startOffset || offset > l.endOffset {
		return nil, fmt.Errorf("%w: %d is outside [%d, %d]", ErrOffsetOutOfRange, offset, l.startOffset, l.endOffset)
	}
	maxBytes = min(max(maxBytes, 0), readBytesMax)
	if offset == l.endOffset || offset >= maxOffset {
		return nil, nil
	}
	s := l.segments[l.segmentIndexFor(offset)]
	// One read usually covers the way from the index entry to the batch
	// (about one index interval) and the batches returned.
	chunkBytes := min(l.config.IndexIntervalBytes+maxBytes+batch.HeaderSize, readBytesMax)
	if l.world.Buggify.Hit(core.BuggifyLogReadSmallChunks) {
		chunkBytes = batch.HeaderSize // every batch its own read
	}
	var result []byte
	err := withRereads(func() error {
		entry := s.offsets.lookup(offset)
		// The first chunk goes into the log's reusable buffer when it
		// fits (see readBuffer.forChunk), and what is served from it is
		// copied out, so a small answer costs an allocation of its own
		// size rather than of the chunk's. Any other chunk gets a buffer
		// of its own (no free list), served without copying: the
		// batches of one chunk are adjacent in it. An answer that spans
		// chunks (a first batch bigger than the chunk, or a long way
		// from the index entry) is copied together at the end.
		firstChunkBytes := min(int64(chunkBytes), s.bytes-entry.position)
		var r batchReader
		s.startReader(&r, entry.position, entry.offset, chunkBytes, l.reads.forChunk(firstChunkBytes))
		r.handOut = true
		if !transient {
			r.skipKnown(&l.known, s, offset, l.config.IndexIntervalBytes)
		}
		// Adjacent batches, one run per chunk; nearly every answer is
		// one run, and the array on the stack saves allocating for it.
		var runsOnStack [2]run
		runs := runsOnStack[:0]
		total := 0
		found := false
		for r.next() {
			h := &r.header
			if headerLastOffset(h) < offset {
				continue
			}
			found = true
			if h.BaseOffset >= maxOffset {
				break
			}
			if epoch, known := l.epochs.epochAt(headerLastOffset(h)); known && epoch != h.LeaderEpoch {
				return fmt.Errorf("%w: batch at offset %d has epoch %d, the cache says %d", errBadData, h.BaseOffset, h.LeaderEpoch, epoch)
			}
			if total+len(r.current) > maxBytes && !(atLeastOne && total == 0) {
				break
			}
			total += len(r.current)
			if last := len(runs) - 1; last >= 0 && runs[last].load == r.loads {
				runs[last].bytes = extendRun(runs[last].bytes, r.current)
				continue
			}
			runs = append(runs, run{bytes: r.current, load: r.loads, fresh: r.chunkFresh})
		}
		if r.err != nil {
			return r.err
		}
		if !found {
			return fmt.Errorf("%w: offset %d not found in segment %d", errBadData, offset, s.baseOffset)
		}
		if transient && len(runs) == 1 {
			result = runs[0].bytes
		} else {
			result = joinRuns(runs, total)
		}
		return nil
	})
	if errors.Is(err, errBadData) {
		return nil, fmt.Errorf("%w: segment %d: %v", ErrCorrupt, s.baseOffset, err)
	}
	if err != nil {
		return nil, err
	}
	return result, nil
}

// run is a stretch of adjacent batches Read serves from one chunk.
type run struct {
	bytes []byte
	load  int  // the reader's load count when the chunk was read
	fresh bool // the chunk is in a buffer of its own (batchReader.chunkFresh)
}

// extendRun extends run, a slice of a reader's chunk, over next, the batch
// that follows it in the same chunk.
func extendRun(run, next []byte) []byte {
	extended := run[:len(run)+len(next)]
	if len(next) > 0 && &extended[len(run)] != &next[0] {
		panic("log: a batch read from the same chunk does not follow the one before it")
	}
	return extended
}

// joinRuns is the answer made of runs: a lone run in a buffer of its own,
// capped so that nobody appending to it writes over the rest of its
// chunk, or else the runs copied together (a run in the log's reusable
// buffer must not outlive the next read); nil when there are none.
func joinRuns(runs []run, total int) []byte {
	switch {
	case len(runs) == 0:
		return nil
	case len(runs) == 1 && runs[0].fresh:
		only := runs[0].bytes
		return only[:len(only):len(only)]
	}
	joined := make([]byte, 0, total)
	for _, r := range runs {
		joined = append(joined, r.bytes...)
	}
	return joined
}

// TimestampOffset is the answer of OffsetForTimestamp.
type TimestampOffset struct {
	Offset    int64 // where a consumer should start
	Timestamp int64 // the max timestamp of the batch found
}

// OffsetForTimestamp finds the first batch, at or after StartOffset, whose
// max timestamp is at or above timestamp (ListOffsets by timestamp). It
// picks the first segment whose largest timestamp reaches timestamp, then
// uses that segment's time index to skip the batches known to be older.
// Batches that compaction emptied hold no record to answer with, and are
// passed over, as Kafka's search, which walks records, passes them. found
// is false when no batch is that recent. The answer is batch-level: the
// batch's base offset (or StartOffset if the start lies inside it); a
// caller wanting the exact record decodes the batch, and if none of the
// batch's records at or after the answer reaches timestamp, looks again
// past the batch with OffsetForTimestampFrom.
func (l *Log) OffsetForTimestamp(timestamp int64) (answer TimestampOffset, found bool, err error) {
	return l.OffsetForTimestampFrom(timestamp, l.startOffset)
}

// OffsetForTimestampFrom is OffsetForTimestamp among the batches that hold
// offsets at or above from (and StartOffset).
func (l *Log) OffsetForTimestampFrom(timestamp, from int64) (answer TimestampOffset, found bool, err error) {
	if err := l.usable(); err != nil {
		return TimestampOffset{}, false, err
	}
	from = max(from, l.startOffset)
	for _, s := range l.segments {
		if s.maxTimestamp < timestamp || s.endOffset <= from {
			continue
		}
		h, found, err := s.firstBatchSince(timestamp, from)
		if err != nil {
			if errors.Is(err, errBadData) {
				err = fmt.Errorf("%w: segment %d: %v", ErrCorrupt, s.baseOffset, err)
			}
			return TimestampOffset{}, false, err
		}
		if found {
			return TimestampOffset{Offset: max(h.BaseOffset, from), Timestamp: h.MaxTimestamp}, true, nil
		}
	}
	return TimestampOffset{}, false, nil
}

// firstBatchSince finds the segment's first batch holding records at or
// above minOffset with a max timestamp at or above timestamp.
func (s *segment) firstBatchSince(timestamp, minOffset int64) (h batch.Header, found bool, err error) {
	// Every batch up to an entry older than timestamp is older too.
	start := s.offsets.lookup(minOffset)
	if older, ok := s.times.lastBefore(timestamp); ok {
		if candidate := s.offsets.lookup(older.offset); candidate.offset > start.offset {
			start = candidate
		}
	}
	err = withRereads(func() error {
		var r batchReader
		s.startReader(&r, start.position, start.offset, scanChunkBytes, s.reads.bytes)
		defer func() { s.reads.keep(r.buffer) }()
		for r.next() {
			if r.header.LastOffset() >= minOffset && r.header.MaxTimestamp >= timestamp && r.header.RecordCount > 0 {
				h, found = r.header, true
				return nil
			}
		}
		return r.err
	})
	return h, found, err
}

// MaxTimestamp finds, among the batches below upTo that hold offsets at or
// above StartOffset, the one whose max timestamp is the largest (the first
// of them on a tie) and returns its base offset (or StartOffset if the
// start lies inside it) and that timestamp (ListOffsets' -3, KIP-734).
// Every segment wholly below upTo answers from what it tracks, but for the
// segment that upTo falls in, and the one the start falls in if the batch
// it tracks begins below the start: that batch may lie wholly below it,
// deleted, and a live one hold the largest timestamp of what is left, so
// those are scanned (log workload, check time-lookup). found is false when
// no such batch has a timestamp.
func (l *Log) MaxTimestamp(upTo int64) (offset, timestamp int64, found bool, err error) {
	if err := l.usable(); err != nil {
		return 0, 0, false, err
	}
	offset, timestamp = -1, noTimestamp
	for _, s := range l.segments {
		if s.baseOffset >= upTo || s.endOffset <= l.startOffset {
			continue
		}
		if s.endOffset <= upTo && s.offsetOfMaxTimestamp >= l.startOffset {
			if s.maxTimestamp > timestamp {
				offset, timestamp = s.offsetOfMaxTimestamp, s.maxTimestamp
			}
			continue
		}
		from := s.offsets.lookup(l.startOffset)
		err := withRereads(func() error {
			var r batchReader
			s.startReader(&r, from.position, from.offset, scanChunkBytes, nil)
			for r.next() {
				h := &r.header
				if h.BaseOffset >= upTo {
					break
				}
				if h.LastOffset() >= l.startOffset && h.MaxTimestamp > timestamp {
					offset, timestamp = h.BaseOffset, h.MaxTimestamp
				}
			}
			return r.err
		})
		if err != nil {
			if errors.Is(err, errBadData) {
				err = fmt.Errorf("%w: segment %d: %v", ErrCorrupt, s.baseOffset, err)
			}
			return 0, 0, false, err
		}
	}
	return max(offset, l.startOffset), timestamp, offset >= 0, nil
}
