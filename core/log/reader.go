package log

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"sluice/core"
	"sluice/core/batch"
)

// batchReader walks the whole batches stored in one segment file, from a
// position up to a limit, and hands out only batches that pass every check
// a stored batch can be given:
//   - its header parses (magic 2, a plausible length) and it ends at or
//     before the limit;
//   - it starts at or after the offset the previous one ended at, and ends
//     below offsetLimit, which no batch of the segment reaches. The base
//     offset is outside the CRC, so these bounds are its only certain
//     checks; a gap (offsets compaction removed, see compaction.go) is
//     therefore believed only when a second read of the base offset,
//     straight from the file, agrees with the first, which tells a gap
//     from a bit flipped in flight (but not always: see offsetLimit);
//   - its CRC matches (unless verifyCRC is off, which only the
//     CanaryRecoverySkipsCRC bug does).
//
// A reader that starts at an index entry requires the batch there to start
// at exactly the entry's offset: an entry names the base offset of the
// batch at its position, so any other batch means the entry, or the
// batch's base offset, was read wrong, and the batch would otherwise pass
// for the first after a gap and be served for offsets it does not hold.
// When every read of it fails so, the entry is wrong where it is kept (a
// bit the media flipped in an index file, which carries no checksum), and
// a reader given the index it came from forgets it there: the caller's
// next read starts from the entry before and serves the right batches, as
// if the index were merely sparser.
//
// In a segment that may hold gaps (segment.mayHaveGaps) continuity says
// nothing: a base offset flipped in flight to exactly where the previous
// batch ended would pass for the next batch. There every base offset is
// confirmed by a second read (confirmEveryOffset).
//
// It reads the file in chunks of at least chunkBytes, so a run of small
// batches costs one read, into one buffer it reuses: the current batch's
// bytes are valid only until the next call to next. A batch that fails a
// check is read again from the file (see next); one that fails every
// time stops it with errBadData and leaves position at the bad batch, and
// callers re-read the whole way (see withRereads) before believing it.
type batchReader struct {
	file       core.File
	limit      int64
	chunkBytes int
	verifyCRC  bool
	// confirmEveryOffset confirms every base offset with a second read,
	// not only those after a gap (see above).
	confirmEveryOffset bool
	// suspect: the first batch failed a check before (a caller reads
	// again from it), so it is believed only once re-reads agree (see
	// next).
	suspect bool

	position   int64 // where the next batch starts
	nextOffset int64 // the offset the next batch must start at
	// offsetLimit is an offset no batch of the segment reaches: its end
	// offset when its batches are known (startReader), else the farthest
	// its indexes can reach from its base (readForward, which finds the
	// end). A base offset read past it is wrong whatever re-reads say:
	// their agreement is only likely, not certain, and a bit flipped the
	// same way in two re-reads after the first read once had a batch at
	// offset 2^34+307 confirmed as the next after a gap, and Read stopped
	// there as at its maxOffset, serving nothing for an offset the log
	// holds (log seed 3823448).
	offsetLimit int64
	// entryPosition is where the reader started if an index entry says
	// the batch at nextOffset starts there, else -1 (see above).
	entryPosition int64
	// index, when not nil, holds that entry, and forgets it if the batch
	// at entryPosition fails every read (see above). Only readers whose
	// callers look the entry up afresh get it: recovery's readForward
	// restarts the segment's state at the entry, which must stay put.
	index *offsetIndex

	chunk         []byte
	chunkPosition int64
	buffer        []byte // backs chunk; reused for every read
	// rereads is where confirmBaseOffset reads a base offset again (the
	// log's, see readBuffer.rereads), nil for one of its own.
	rereads *[8]byte

	// header and current are the batch next last returned true for (a
	// call that returns false may leave in header what it parsed), and
	// currentPosition where it starts.
	header          batch.Header
	current         []byte
	currentPosition int64
	err             error

	// handOut is set when the caller keeps the batches it is handed
	// (Read serves them without copying where it can): the first chunk
	// may go into the buffer the caller passed (which the caller copies
	// out of before it reads again), but every later chunk gets a buffer
	// of its own, never reused, so a batch stays valid after next.
	handOut bool
	// chunkFresh reports that the current chunk is in a buffer made for
	// it rather than in the caller's. Under handOut nobody writes into a
	// fresh chunk again, so its batches may be kept without copying.
	chunkFresh bool
	// loads counts the chunks read so far: batches handed out under the
	// same count are adjacent in one buffer.
	loads int

	// known, when not nil, takes a copy of each batch checked in the
	// first chunk (see skipKnown), and checkedUntil is where the batches
	// skipKnown found there end (see crcChecked).
	known        *knownBatches
	checkedUntil int64
}

// start makes r a reader of file from position up to limit, where a batch
// starting at nextOffset is expected and every batch holds offsets below
// offsetLimit, reading chunks of chunkBytes into buffer (or buffers of its
// own when too small). Callers keep the reader in a local variable, on
// their stack, and start it in place: allocated for every read, or
// returned by value, it was built aside and copied, and either showed in
// the simulator's profile. (So is a composite literal assigned to *r:
// hence the fields one by one.)
func (r *batchReader) start(file core.File, position, limit, nextOffset, offsetLimit int64, chunkBytes int, buffer []byte) {
	if nextOffset > offsetLimit {
		panic(fmt.Sprintf("log: a reader expecting offset %d is bounded below it, at %d", nextOffset, offsetLimit))
	}
	*r = batchReader{}
	r.file, r.limit, r.chunkBytes, r.verifyCRC = file, limit, chunkBytes, true
	r.position, r.nextOffset, r.entryPosition = position, nextOffset, -1
	r.offsetLimit = offsetLimit
	r.buffer = buffer
}

// next advances to the next batch and reports whether there is one. It
// returns false at the limit (err nil) or at a batch that fails a check
// on readAttemptsMax reads in a row.
//
// Each batch gets its own rereads: were only whole reads repeated, a read
// of many batches, each a chance for a flip in flight, would fail every
// attempt far more often than one batch does, and a long read over a
// flaky bus would report corruption (and recovery cut synced data) where
// the media is fine (log seed 248892, reading a batch at a time under
// BUGGIFY). But a batch that failed once may be bad on the media too, and
// a torn one can lie a single bit from a valid batch (its tail zeroed
// where the real tail was zeros but for one bit): a flip in flight of
// that bit makes it pass. So a pass after a failure is believed only once
// confirmReadsAgreeing more reads return the same bytes; retried without
// that, recovery kept such a batch (log seed 70543).
func (r *batchReader) next() bool {
	for attempt := 1; ; attempt++ {
		nextOffset := r.nextOffset
		if r.nextOnce() {
			suspect := attempt > 1 || r.suspect
			r.suspect = false
			if !suspect {
				return true
			}
			stable, err := r.currentStable()
			if err != nil {
				r.err = err
				return false
			}
			if stable {
				return true
			}
			// Not the media's bytes: undo the step and read again.
			r.position, r.nextOffset = r.currentPosition, nextOffset
			r.err = fmt.Errorf("%w: at position %d: batch read differently on later reads", errBadData, r.position)
		}
		if !errors.Is(r.err, errBadData) {
			return false
		}
		if attempt == readAttemptsMax {
			if r.position == r.entryPosition && r.index != nil {
				r.index.forget(r.entryPosition)
			}
			return false
		}
		r.err, r.chunk = nil, nil // read the batch from the file again
	}
}

// currentStable reports whether confirmReadsAgreeing reads of the current
// batch, straight from the file, return its bytes.
func (r *batchReader) currentStable() (bool, error) {
	again := make([]byte, len(r.current))
	for range confirmReadsAgreeing {
		if err := readFull(r.file, again, r.currentPosition); err != nil {
			return false, err
		}
		if !bytes.Equal(again, r.current) {
			return false, nil
		}
	}
	return true, nil
}

func (r *batchReader) nextOnce() bool {
	if r.err != nil || r.position >= r.limit {
		return false
	}
	if r.limit-r.position < batch.HeaderSize {
		return r.fail("torn: %d bytes left, less than a header", r.limit-r.position)
	}
	header, err := r.bytesAt(r.position, batch.HeaderSize)
	if err != nil {
		r.err = err
		return false
	}
	// Parsed in place: a header returned by value would be copied for
	// every batch walked over, and the copy stalls (see batch.ParseInto).
	h := &r.header
	if err := batch.ParseInto(h, header); err != nil {
		return r.fail("%v", err)
	}
	size := headerSize(h)
	switch {
	case size > appendBytesMax:
		return r.fail("batch claims %d bytes, more than any append", size)
	case r.position+size > r.limit:
		return r.fail("torn: batch of %d bytes runs past %d", size, r.limit)
	}
	loadsBefore := r.loads
	b, err := r.bytesAt(r.position, int(size))
	if err != nil {
		r.err = err
		return false
	}
	// The whole batch may come from a later read than its header did:
	// then check the bytes that will be handed out, header included.
	// (Without a read in between, they are the very bytes parsed above.)
	if r.loads != loadsBefore {
		if err := batch.ParseInto(h, b); err != nil || headerSize(h) != size {
			return r.fail("header read differently twice")
		}
	}
	switch {
	case r.position == r.entryPosition && h.BaseOffset != r.nextOffset:
		return r.fail("batch starts at offset %d, but the index entry for its position says %d", h.BaseOffset, r.nextOffset)
	case h.BaseOffset < r.nextOffset:
		return r.fail("batch starts at offset %d, below %d where the previous one ended", h.BaseOffset, r.nextOffset)
	case h.LastOffsetDelta < 0 || h.LastOffsetDelta > relativeOffsetMax:
		return r.fail("last offset delta %d", h.LastOffsetDelta)
	case h.BaseOffset >= r.offsetLimit || headerLastOffset(h) >= r.offsetLimit:
		return r.fail("batch [%d, %d] reaches past offset %d, where the segment ends", h.BaseOffset, headerLastOffset(h), r.offsetLimit)
	case r.verifyCRC && !r.crcChecked(size) && !batch.CheckCRC(b):
		return r.fail("CRC mismatch")
	}
	confirmed := h.BaseOffset > r.nextOffset || r.confirmEveryOffset
	if confirmed {
		if err := r.confirmBaseOffset(h.BaseOffset); err != nil {
			r.err = err
			return false
		}
	}
	r.current, r.currentPosition = b, r.position
	r.position += size
	r.nextOffset = headerLastOffset(h) + 1
	if r.known != nil {
		r.addKnown(confirmed)
	}
	return true
}

// headerSize and headerLastOffset are h.Size() and h.LastOffset() for a
// header held by pointer. The methods take the header by value, and Go
// copies a struct of its 13 fields whole (only structs of a few fields
// live in registers) before it calls them, or runs their inlined bodies;
// in the loops over every batch a read walks past, those copies showed in
// the profile.
func headerSize(h *batch.Header) int64 { return batch.LengthPrefixSize + int64(h.Length) }

func headerLastOffset(h *batch.Header) int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// confirmBaseOffset confirms the current batch's base offset with reads
// from the file rather than the chunk (see rereadsAgree): a disagreement
// is bad data, and the caller reads again.
func (r *batchReader) confirmBaseOffset(baseOffset int64) error {
	var want [8]byte
	binary.BigEndian.PutUint64(want[:], uint64(baseOffset))
	other := r.rereads
	if other == nil {
		other = new([8]byte)
	}
	if agree, err := rereadsAgree(r.file, r.position, want[:], other[:]); err != nil || agree {
		return err
	}
	return fmt.Errorf("%w: at position %d: base offset %d (the previous batch ended at %d) read as %d on later reads", errBadData, r.position, baseOffset, r.nextOffset, int64(binary.BigEndian.Uint64(other[:])))
}

// rereadsAgree reads the len(want) bytes at position again, from the file,
// until confirmReadsAgreeing reads return want (true: they stand) or as
// many do not (false, with the last that did not in other). One agreeing
// read would not do: a flip in flight can hit the same bit twice, and
// under the simulator's heavy read corruption it does; nor would refusing
// at the first disagreement, since a segment whose every batch is
// confirmed would then rarely be read whole.
func rereadsAgree(file core.File, position int64, want, other []byte) (bool, error) {
	again := other
	agree, disagree := 0, 0
	for agree < confirmReadsAgreeing && disagree < confirmReadsAgreeing {
		if err := readFull(file, again, position); err != nil {
			return false, err
		}
		if bytes.Equal(again, want) {
			agree++
		} else {
			disagree++
		}
	}
	return agree == confirmReadsAgreeing, nil
}

func (r *batchReader) fail(format string, args ...any) bool {
	r.err = fmt.Errorf("%w: at position %d: %s", errBadData, r.position, fmt.Sprintf(format, args...))
	return false
}

// bytesAt returns n bytes at position, reading a fresh chunk into the
// buffer when the current one does not hold them.
func (r *batchReader) bytesAt(position int64, n int) ([]byte, error) {
	if position >= r.chunkPosition && position+int64(n) <= r.chunkPosition+int64(len(r.chunk)) {
		start := position - r.chunkPosition
		return r.chunk[start : start+int64(n)], nil
	}
	length := min(max(int64(n), int64(r.chunkBytes)), r.limit-position)
	// Under handOut the batches of the chunks before may have been kept,
	// so only the first chunk may go into the caller's buffer.
	r.chunkFresh = int64(cap(r.buffer)) < length || r.handOut && r.loads > 0
	if r.chunkFresh {
		r.buffer = make([]byte, length)
	}
	r.loads++
	r.chunk, r.chunkPosition = r.buffer[:length], position
	if err := readFull(r.file, r.chunk, position); err != nil {
		r.chunk = nil
		return nil, err
	}
	return r.chunk[:n], nil
}

// readFull fills p from offset. A file shorter than expected is bad data
// (the segment was cut under us, or its size misread), not an I/O failure.
func readFull(f core.File, p []byte, offset int64) error {
	n, err := f.ReadAt(p, offset)
	if n == len(p) {
		return nil
	}
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: file ends at %d, expected %d bytes at %d", errBadData, offset+int64(n), len(p), offset)
	}
	if err == nil {
		err = io.ErrShortBuffer
	}
	return fmt.Errorf("log: read at %d: %w", offset, err)
}

// withRereads runs read until it succeeds, fails with something other
// than bad data, or has found bad data readAttemptsMax times in a row. A
// read can be corrupted between the media and memory while the media is
// fine; only a failure that persists is believed.
func withRereads(read func() error) error {
	var err error
	for range readAttemptsMax {
		if err = read(); err == nil || !errors.Is(err, errBadData) {
			return err
		}
	}
	return err
}

// readChecked reads a whole small file whose content carries its own check
// (the checkpoint, an index file), re-reading while decode reports bad
// data.
func readChecked[T any](fs core.FS, name string, sizeMax int64, decode func([]byte) (T, error)) (T, error) {
	var value T
	f, size, err := openSized(fs, name, sizeMax)
	if err != nil {
		return value, err
	}
	defer f.Close()
	err = withRereads(func() error {
		b := make([]byte, size)
		if err := readFull(f, b, 0); err != nil {
			return err
		}
		value, err = decode(b)
		return err
	})
	return value, err
}

// openSized is core.OpenSized with a file over its bound taken as bad
// data: the log's own files never outgrow their bounds, so one that does
// is damaged.
func openSized(fs core.FS, name string, sizeMax int64) (core.File, int64, error) {
	f, size, err := core.OpenSized(fs, name, sizeMax)
	if errors.Is(err, core.ErrTooBig) {
		err = fmt.Errorf("%w: %w", errBadData, err)
	}
	return f, size, err
}

// readBuffer is a log's reusable read buffer, shared by its segments: the
// log reads from one place at a time, and callers copy what they keep.
type readBuffer struct {
	bytes []byte
	// rereads is where readers read a base offset again to confirm it:
	// passed to File.ReadAt, an array on the reader's stack would be
	// allocated on the heap for every confirmation.
	rereads [8]byte
}

// keep holds on to a reader's buffer for the next read, unless it is
// bigger than a scan chunk: a rare huge read should not stay pinned.
func (b *readBuffer) keep(buffer []byte) {
	if cap(buffer) > cap(b.bytes) && cap(buffer) <= scanChunkBytes {
		b.bytes = buffer
	}
}

// forChunk returns the buffer, grown if it cannot hold a chunk of n
// bytes, for a read that copies out what it keeps before the log reads
// again (Read). It returns nil when n is more than a kept buffer may
// hold (scanChunkBytes): such a read gets a buffer of its own.
func (b *readBuffer) forChunk(n int64) []byte {
	if n > scanChunkBytes {
		return nil
	}
	if int64(cap(b.bytes)) < n {
		// At least double: the reads at the tail of a growing segment
		// ask for a little more each time, and should not reallocate
		// for each.
		b.bytes = make([]byte, min(max(n, 2*int64(cap(b.bytes))), scanChunkBytes))
	}
	return b.bytes
}
