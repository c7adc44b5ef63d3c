package log

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
)

// offsetIndex is a segment's sparse offset index, Kafka's .index file: a
// sorted list saying "the batch starting at this offset starts at this byte
// position". One entry is added every IndexIntervalBytes or so of batches;
// the first batch of a segment is never indexed because position 0 is known.
//
// On disk each entry is 8 bytes, big-endian: the offset relative to the
// segment's base (uint32) and the position (uint32).
//
// Invariant: entries are strictly increasing in both offset and position,
// every offset is above baseOffset by at most relativeOffsetMax, and there
// are at most indexEntriesMax of them.
type offsetIndex struct {
	baseOffset int64
	entries    []offsetEntry
}

type offsetEntry struct {
	offset   int64 // base offset of the batch
	position int64 // where the batch starts in the segment file
}

const offsetEntryBytes = 8

func (x *offsetIndex) full() bool { return len(x.entries) >= indexEntriesMax }

// last is the last entry, or the implicit entry for the segment's start.
func (x *offsetIndex) last() offsetEntry {
	if len(x.entries) == 0 {
		return offsetEntry{offset: x.baseOffset, position: 0}
	}
	return x.entries[len(x.entries)-1]
}

func (x *offsetIndex) add(offset, position int64) {
	previous := x.last()
	if len(x.entries) > 0 && (offset <= previous.offset || position <= previous.position) {
		panic(fmt.Sprintf("log: offset index entry (%d, %d) does not follow (%d, %d)", offset, position, previous.offset, previous.position))
	}
	if offset-x.baseOffset > relativeOffsetMax || offset < x.baseOffset || x.full() {
		panic(fmt.Sprintf("log: offset index entry %d out of range for base %d (entries %d)", offset, x.baseOffset, len(x.entries)))
	}
	x.entries = append(x.entries, offsetEntry{offset: offset, position: position})
}

// lookup returns the last entry at or below offset: the batch there starts
// at or before the one holding offset, so a reader scans forward from it.
func (x *offsetIndex) lookup(offset int64) offsetEntry {
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].offset > offset })
	if i == 0 {
		return offsetEntry{offset: x.baseOffset, position: 0}
	}
	return x.entries[i-1]
}

// truncateFromPosition drops the entries of batches at or after position.
func (x *offsetIndex) truncateFromPosition(position int64) {
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].position >= position })
	x.entries = x.entries[:i]
}

// forget drops the entry at position, which a reader found wrong (see
// batchReader): the batches it covered are found from the entry before.
func (x *offsetIndex) forget(position int64) {
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].position >= position })
	if i < len(x.entries) && x.entries[i].position == position {
		x.entries = slices.Delete(x.entries, i, i+1)
	}
}

func (x *offsetIndex) encode() []byte {
	return x.appendTo(make([]byte, 0, len(x.entries)*offsetEntryBytes+indexChecksumBytes))
}

// appendTo is encode appending to b: the entries, then their checksum
// (index_checksum.go).
func (x *offsetIndex) appendTo(b []byte) []byte {
	start := len(b)
	for _, e := range x.entries {
		b = binary.BigEndian.AppendUint32(b, uint32(e.offset-x.baseOffset))
		b = binary.BigEndian.AppendUint32(b, uint32(e.position))
	}
	return offsetIndexKind.appendChecksum(b, start)
}

// decodeOffsetIndex reads an index file, checks its checksum, and
// sanity-checks it against the segment it belongs to, as Kafka's
// sanityCheck does: whole entries, strictly increasing, every position
// inside the segment file.
func decodeOffsetIndex(baseOffset int64, b []byte, segmentBytes int64) (offsetIndex, error) {
	x := offsetIndex{baseOffset: baseOffset}
	b, err := offsetIndexKind.entries(b)
	if err != nil {
		return x, err
	}
	if len(b)%offsetEntryBytes != 0 {
		return x, fmt.Errorf("%w: offset index size %d is not a multiple of %d", errBadData, len(b), offsetEntryBytes)
	}
	count := len(b) / offsetEntryBytes
	if count > indexEntriesMax {
		return x, fmt.Errorf("%w: offset index has %d entries, more than %d", errBadData, count, indexEntriesMax)
	}
	x.entries = make([]offsetEntry, 0, count)
	for i := range count {
		relative := binary.BigEndian.Uint32(b[i*offsetEntryBytes:])
		position := int64(binary.BigEndian.Uint32(b[i*offsetEntryBytes+4:]))
		e := offsetEntry{offset: baseOffset + int64(relative), position: position}
		if relative > relativeOffsetMax || position >= segmentBytes {
			return x, fmt.Errorf("%w: offset index entry %d (%d, %d) is outside the segment", errBadData, i, e.offset, position)
		}
		if i > 0 && (e.offset <= x.entries[i-1].offset || e.position <= x.entries[i-1].position) {
			return x, fmt.Errorf("%w: offset index entry %d does not increase", errBadData, i)
		}
		x.entries = append(x.entries, e)
	}
	return x, nil
}
