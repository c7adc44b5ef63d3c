package log

import (
	"bytes"

	"sluice/core/batch"
)

// knownBatches is a copy of batches a Read checked in its first chunk, from
// where its reader started, with where each ends and the offset the batch
// after it must start at.
//
// A fetch reads from the offset index entry at or below its offset, so
// most of the batches it checks lie before that offset and are only walked
// past (nine in ten in the simulator's client-heavy seeds, where a batch is
// a hundred bytes and an index entry comes every few kilobytes), and the
// next fetch of the partition walks past the same ones again. Each must
// still be read, since the reads (and the faults they draw in the
// simulator) must not change, but checking them is a pure function of
// their bytes and of where the walk starts: bytes equal to ones that
// passed every check from the same start pass again, in the same way. So
// one comparison of the new chunk's start with this copy stands for
// parsing and CRC-checking each of those batches; any difference, a bit
// flipped in flight or a segment cut and written again, and the reader
// checks them one by one as before.
//
// Only batches whose checks read nothing more from the file are copied: in
// the first chunk, on the first attempt, with no base offset confirmed by
// a second read (a gap, or a segment where every one is confirmed).
type knownBatches struct {
	segment *segment
	// position, nextOffset and entryPosition are the reader's at its
	// start: where the first batch starts, the offset it must start at,
	// and whether the index says so (batchReader.entryPosition).
	position      int64
	nextOffset    int64
	entryPosition int64

	bytes []byte
	ends  []knownEnd
	// reach is how far from the start a batch may begin and be copied:
	// one index interval. Beyond it the log has indexed a batch, and a
	// read of a later offset starts there instead.
	reach int64
}

// knownEnd is where a known batch ends, counted from the first, and the
// offset the batch after it must start at.
type knownEnd struct {
	bytes      int
	nextOffset int64
}

// knownBytesMax bounds the copy, whatever the index interval
// (index.interval.bytes, 4 KiB by default, see reach).
const knownBytesMax = 64 << 10

// knownBatchBytesTypical is a guess of a stored batch's size, for the
// copy's first capacity: a few records of a hundred bytes or so.
const knownBatchBytesTypical = 256

// skipKnown loads r's first chunk, as its first call to next would, and
// compares it with the batches known holds from the same start: r moves
// past those that end below offset, and takes the CRCs of the others it
// finds byte for byte as checked (checkedUntil). Then r adds to known the
// batches it goes on to check in that chunk. It is for a reader just
// started on s with verifyCRC set; indexIntervalBytes is the log's.
func (r *batchReader) skipKnown(known *knownBatches, s *segment, offset int64, indexIntervalBytes int) {
	if r.loads != 0 || r.limit-r.position < batch.HeaderSize {
		return // the first next fails before loading anything
	}
	if _, err := r.bytesAt(r.position, batch.HeaderSize); err != nil {
		r.err = err // next takes it as its first attempt's failure
		return
	}
	if r.confirmEveryOffset || !r.verifyCRC {
		return
	}
	r.known = known
	if known.segment == s && known.position == r.position && known.nextOffset == r.nextOffset && known.entryPosition == r.entryPosition {
		// whole is the last known batch within the chunk, and skip the
		// last of those that end below offset (-1 for none).
		whole := len(known.ends) - 1
		for whole >= 0 && known.ends[whole].bytes > len(r.chunk) {
			whole--
		}
		skip := whole
		for skip >= 0 && known.ends[skip].nextOffset > offset {
			skip--
		}
		matched, compared := -1, 0
		if skip >= 0 && bytes.Equal(r.chunk[:known.ends[skip].bytes], known.bytes[:known.ends[skip].bytes]) {
			matched, compared = skip, known.ends[skip].bytes
		}
		if matched == skip && whole > skip && bytes.Equal(r.chunk[compared:known.ends[whole].bytes], known.bytes[compared:known.ends[whole].bytes]) {
			matched = whole
		}
		if matched >= 0 {
			end := known.ends[matched]
			known.bytes, known.ends = known.bytes[:end.bytes], known.ends[:matched+1]
			r.checkedUntil = r.position + int64(end.bytes)
			if skip >= 0 {
				r.position += int64(known.ends[skip].bytes)
				r.nextOffset = known.ends[skip].nextOffset
			}
			return
		}
	}
	known.segment, known.position, known.nextOffset, known.entryPosition = s, r.position, r.nextOffset, r.entryPosition
	known.reach = int64(min(indexIntervalBytes, knownBytesMax))
	known.bytes, known.ends = known.bytes[:0], known.ends[:0]
	if known.bytes == nil {
		// Made once, at about the size it grows to, rather than grown
		// step by step: every log that serves fetches has one.
		known.bytes = make([]byte, 0, known.reach+knownBatchBytesTypical)
		known.ends = make([]knownEnd, 0, known.reach/knownBatchBytesTypical+1)
	}
}

// crcChecked reports whether the batch nextOnce has in hand, size bytes at
// r.position, lies where skipKnown found the chunk to hold known batches,
// which passed their CRCs: the chunk is still the first (a batch read
// again comes in another), and the reader has walked the same bytes from
// the same start, so this batch is one of them.
func (r *batchReader) crcChecked(size int64) bool {
	return r.loads == 1 && r.position+size <= r.checkedUntil
}

// addKnown copies the batch nextOnce just checked into r.known, if it may
// stand for checking it again (see knownBatches), and if known does not
// hold it already (skipKnown found it there).
func (r *batchReader) addKnown(confirmed bool) {
	known := r.known
	if r.currentPosition+int64(len(r.current)) <= r.checkedUntil {
		return
	}
	if confirmed || r.loads != 1 || r.suspect || r.currentPosition-known.position != int64(len(known.bytes)) ||
		int64(len(known.bytes)) > known.reach || len(known.bytes)+len(r.current) > knownBytesMax {
		r.known = nil // the rest of this read is not copied
		return
	}
	known.bytes = append(known.bytes, r.current...)
	known.ends = append(known.ends, knownEnd{bytes: len(known.bytes), nextOffset: r.nextOffset})
}

// appended extends known with batches an append just wrote at position of
// s, when they continue the known batches there: a read walking on from
// the last known batch would find them, and they pass every check it
// makes, as the append checked them before writing (splitBatches: whole,
// CRC, offsets) and stamped them only outside the CRC. Each must start
// where the one before ends (after a gap, a read confirms the base
// offset with reads of its own, see addKnown). So the first fetch of
// what a leader appended, its followers', need not check its CRC again.
func (known *knownBatches) appended(s *segment, batches []byte, position int64, spans []batchSpan) {
	if known.segment != s || s.mayHaveGaps || len(known.ends) == 0 || known.position+int64(len(known.bytes)) != position {
		return
	}
	for i := range spans {
		h := &spans[i].header
		size := int(headerSize(h))
		if h.BaseOffset != known.ends[len(known.ends)-1].nextOffset ||
			int64(len(known.bytes)) > known.reach || len(known.bytes)+size > knownBytesMax {
			return
		}
		known.bytes = append(known.bytes, batches[spans[i].position:spans[i].position+size]...)
		known.ends = append(known.ends, knownEnd{bytes: len(known.bytes), nextOffset: headerLastOffset(h) + 1})
	}
}
