package log

import (
	"encoding/binary"
	"errors"
	"fmt"

	"sluice/core/batch"
)

// offsetMap is a compaction pass's map from key to the offset of its latest
// record in the dirty section, Kafka's SkimpyOffsetMap. Kafka keys it by a
// 16-byte hash of the key to fit a fixed buffer and accepts the tiny chance
// of a collision removing a record it should keep; this one keys it by the
// key itself and bounds its memory instead (offsetMapBytesMax), so a pass
// never removes a record by mistake. It is only ever looked up, never
// ranged over, so Go's map order cannot reach anything.
type offsetMap struct {
	latest map[string]int64
	bytes  int
}

func newOffsetMap() offsetMap { return offsetMap{latest: map[string]int64{}} }

// put records offset as key's latest. It reports false, changing nothing,
// when a new key would not fit.
func (m *offsetMap) put(key []byte, offset int64) bool {
	if previous, found := m.latest[string(key)]; found {
		if offset <= previous {
			panic(fmt.Sprintf("log: offset map went back for a key: %d after %d", offset, previous))
		}
		m.latest[string(key)] = offset
		return true
	}
	cost := len(key) + offsetMapEntryOverheadBytes
	if m.bytes+cost > offsetMapBytesMax {
		return false
	}
	m.latest[string(key)] = offset
	m.bytes += cost
	return true
}

// supersedes reports whether the map holds a later record of key than the
// one at offset.
func (m *offsetMap) supersedes(key []byte, offset int64) bool {
	latest, found := m.latest[string(key)]
	return found && latest > offset
}

func (m *offsetMap) count() int { return len(m.latest) }

// buildOffsetMap reads the dirty section from pass.dirtyStart towards end
// and puts every keyed record in the map, stopping early (at a record) when
// the map is full or the call's read budget is spent, once it has taken at
// least one batch. pass.mapEnd is where it stopped.
func (l *Log) buildOffsetMap(pass *cleanerPass, end int64, result *CompactionResult, budget *int64) error {
	full := false
	for i := l.segmentIndexFor(pass.dirtyStart); i < len(l.segments) && !full; i++ {
		s := l.segments[i]
		if s.baseOffset >= end {
			break
		}
		err := s.walkBatches(pass.dirtyStart, func(h batch.Header, b []byte, _ int64) (bool, error) {
			if *budget <= 0 && pass.mapEnd > pass.dirtyStart {
				full = true
				return false, nil
			}
			*budget -= int64(len(b))
			result.BytesRead += int64(len(b))
			records, ok := l.lookInto(h, b)
			if !ok {
				// Its records cannot be known: they stay, and
				// supersede nothing.
				pass.mapEnd = h.NextOffset()
				return true, nil
			}
			for _, r := range records {
				offset := h.BaseOffset + int64(r.OffsetDelta)
				if offset < pass.dirtyStart || r.Key == nil {
					continue
				}
				if !pass.offsets.put(r.Key, offset) {
					pass.mapEnd = offset
					full = true
					return false, nil
				}
			}
			pass.mapEnd = h.NextOffset()
			return true, nil
		})
		if err != nil {
			return l.readFailure(s, err)
		}
	}
	if pass.mapEnd > end {
		panic(fmt.Sprintf("log: offset map ends at %d, beyond the cleanable end %d", pass.mapEnd, end))
	}
	return nil
}

// lookInto returns the records of a batch for compaction, decompressing
// them with World.Codecs, in a slice the next call reuses. It reports false for a batch whose records must
// be left as they are: a control batch, a compressed one without Codecs,
// or one whose records do not decode into increasing offsets within the
// batch (bad data that passed the CRC because the producer wrote it).
func (l *Log) lookInto(h batch.Header, b []byte) ([]batch.RawRecord, bool) {
	if h.IsControl() {
		return nil, false
	}
	section := b[batch.HeaderSize:h.Size()]
	if codec := h.Compression(); codec != batch.CompressionNone {
		if l.world.Codecs == nil {
			if !l.compressedNoted {
				l.compressedNoted = true
				l.logger().Warn("compaction leaves compressed batches as they are: no Codecs", "offset", h.BaseOffset, "codec", codec)
			}
			return nil, false
		}
		decompressed, err := l.world.Codecs.Decompress(codec, section, recordsDecompressedBytesMax)
		if err != nil {
			l.logger().Warn("compaction cannot decompress a batch; leaving it as it is", "offset", h.BaseOffset, "codec", codec, "error", err)
			return nil, false
		}
		section = decompressed
	}
	records, err := batch.SplitRecordsInto(l.compactionScratch.records, section, h.RecordCount)
	if err == nil {
		l.compactionScratch.records = records
		previous := int32(-1)
		for _, r := range records {
			if r.OffsetDelta <= previous || r.OffsetDelta > h.LastOffsetDelta {
				err = fmt.Errorf("record offset delta %d after %d in a batch of last delta %d", r.OffsetDelta, previous, h.LastOffsetDelta)
				break
			}
			previous = r.OffsetDelta
		}
	}
	if err != nil {
		l.logger().Warn("compaction cannot decode a batch's records; leaving it as it is", "offset", h.BaseOffset, "error", err)
		return nil, false
	}
	return records, true
}

// walkBatches calls visit for each batch of the segment whose last offset
// is at or above from, in order, until visit reports false. Bytes that fail
// their checks, the reader's or visit's (an error wrapping errBadData), are
// re-read, resuming at the failing batch, before the failure is believed
// (see readAttemptsMax). visit's bytes are valid only during the call.
func (s *segment) walkBatches(from int64, visit func(h batch.Header, b []byte, position int64) (more bool, err error)) error {
	entry := s.offsets.lookup(from)
	position, next := entry.position, entry.offset
	failures := 0
	for {
		var r batchReader
		s.startReader(&r, position, next, scanChunkBytes, s.reads.bytes)
		stopped, err := false, error(nil)
		for !stopped && err == nil && r.next() {
			if r.header.LastOffset() >= from {
				var more bool
				if more, err = visit(r.header, r.current, r.currentPosition); err != nil {
					break // the batch is visited again if the error was bad data
				}
				stopped = !more
			}
			failures = 0
			position, next = r.position, r.nextOffset
		}
		s.reads.keep(r.buffer)
		if err == nil && !stopped {
			err = r.err
		}
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, errBadData):
			return err
		}
		failures++
		if failures >= readAttemptsMax {
			return err
		}
		if position == entry.position && next == entry.offset {
			// Nothing passed the entry, which the reader forgets if it
			// is wrong (see batchReader): resumed there without it,
			// the batch at its position would pass for the first after
			// a gap, and the batches between the two offsets be missed.
			entry = s.offsets.lookup(from)
			position, next = entry.position, entry.offset
		}
	}
}

// checkEpoch reports bad data if h's leader epoch, which no CRC covers,
// is not the one the epoch cache says wrote it: compaction must not copy
// a bit flipped on the way from the disk into a new segment. Read makes
// the same check. Where the cache cannot vouch for the epoch, below a log
// start it forgot the epochs under (one not yet durable, so that a crash
// brings those batches back), the epoch is believed once re-reads of it
// from the file agree (log seed 1130340, where compaction copied a flipped
// epoch below such a start and reads after the crash met it).
func (l *Log) checkEpoch(s *segment, h batch.Header, position int64) error {
	epoch, known := l.epochs.epochAt(h.LastOffset())
	switch {
	case known && epoch != h.LeaderEpoch:
		return fmt.Errorf("%w: batch at offset %d has epoch %d, the cache says %d", errBadData, h.BaseOffset, h.LeaderEpoch, epoch)
	case known:
		return nil
	}
	return s.confirmEpoch(position, h.LeaderEpoch)
}

// confirmEpoch confirms the leader epoch of the batch at position with
// reads from the file (see rereadsAgree): a disagreement is bad data, and
// the caller reads the batch again.
func (s *segment) confirmEpoch(position int64, epoch int32) error {
	var want, other [4]byte
	binary.BigEndian.PutUint32(want[:], uint32(epoch))
	// The leader epoch follows the length prefix (baseOffset, batchLength).
	if agree, err := rereadsAgree(s.file, position+batch.LengthPrefixSize, want[:], other[:]); err != nil || agree {
		return err
	}
	return fmt.Errorf("%w: batch at position %d: leader epoch %d read as %d on later reads", errBadData, position, epoch, int32(binary.BigEndian.Uint32(other[:])))
}

// readFailure maps a failed read of segment s to what callers see.
func (l *Log) readFailure(s *segment, err error) error {
	if errors.Is(err, errBadData) {
		return fmt.Errorf("%w: segment %d: %v", ErrCorrupt, s.baseOffset, err)
	}
	return err
}
