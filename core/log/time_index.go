package log

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// noTimestamp is Kafka's NO_TIMESTAMP: the max timestamp of a segment that
// holds no timestamped batch yet.
const noTimestamp = -1

// timeIndex is a segment's time index, Kafka's .timeindex file. An entry
// (timestamp, offset) says: the batch at offset has max timestamp
// timestamp, and no batch before it in the segment has a larger one. An
// entry is added together with an offset index entry when the segment's max
// timestamp has grown since the last one (so at most one per index
// interval), plus a final one when the segment is sealed, so that the last
// entry of a sealed segment holds its largest timestamp.
//
// On disk each entry is 12 bytes, big-endian: the timestamp (int64) and the
// offset relative to the segment's base (uint32).
//
// Invariant: entries are strictly increasing in timestamp and in offset.
type timeIndex struct {
	baseOffset int64
	entries    []timeEntry
}

type timeEntry struct {
	timestamp int64
	offset    int64
}

const timeEntryBytes = 12

func (x *timeIndex) full() bool { return len(x.entries) >= indexEntriesMax }

// last is the last entry, or (noTimestamp, base) when there is none.
func (x *timeIndex) last() timeEntry {
	if len(x.entries) == 0 {
		return timeEntry{timestamp: noTimestamp, offset: x.baseOffset}
	}
	return x.entries[len(x.entries)-1]
}

// maybeAdd adds an entry if timestamp is larger than the last one's.
func (x *timeIndex) maybeAdd(timestamp, offset int64) {
	previous := x.last()
	if timestamp <= previous.timestamp {
		return
	}
	if len(x.entries) > 0 && offset <= previous.offset {
		panic(fmt.Sprintf("log: time index entry (%d, %d) does not follow (%d, %d)", timestamp, offset, previous.timestamp, previous.offset))
	}
	if offset-x.baseOffset > relativeOffsetMax || offset < x.baseOffset || x.full() {
		panic(fmt.Sprintf("log: time index entry %d out of range for base %d (entries %d)", offset, x.baseOffset, len(x.entries)))
	}
	x.entries = append(x.entries, timeEntry{timestamp: timestamp, offset: offset})
}

// lastBefore returns the last entry whose timestamp is below timestamp:
// every batch up to its offset is older than timestamp, so a search for
// the first batch at or after timestamp can start past it.
func (x *timeIndex) lastBefore(timestamp int64) (timeEntry, bool) {
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].timestamp >= timestamp })
	if i == 0 {
		return timeEntry{}, false
	}
	return x.entries[i-1], true
}

// truncateFromOffset drops the entries about batches at or after offset.
func (x *timeIndex) truncateFromOffset(offset int64) {
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].offset >= offset })
	x.entries = x.entries[:i]
}

func (x *timeIndex) encode() []byte {
	return x.appendTo(make([]byte, 0, len(x.entries)*timeEntryBytes+indexChecksumBytes))
}

// appendTo is encode appending to b: the entries, then their checksum
// (index_checksum.go).
func (x *timeIndex) appendTo(b []byte) []byte {
	start := len(b)
	for _, e := range x.entries {
		b = binary.BigEndian.AppendUint64(b, uint64(e.timestamp))
		b = binary.BigEndian.AppendUint32(b, uint32(e.offset-x.baseOffset))
	}
	return timeIndexKind.appendChecksum(b, start)
}

// decodeTimeIndex reads a time index file, checks its checksum, and
// sanity-checks it: whole entries, strictly increasing. Whether its offsets lie inside the segment
// is checked once the segment's end is known.
func decodeTimeIndex(baseOffset int64, b []byte) (timeIndex, error) {
	x := timeIndex{baseOffset: baseOffset}
	b, err := timeIndexKind.entries(b)
	if err != nil {
		return x, err
	}
	if len(b)%timeEntryBytes != 0 {
		return x, fmt.Errorf("%w: time index size %d is not a multiple of %d", errBadData, len(b), timeEntryBytes)
	}
	count := len(b) / timeEntryBytes
	if count > indexEntriesMax {
		return x, fmt.Errorf("%w: time index has %d entries, more than %d", errBadData, count, indexEntriesMax)
	}
	x.entries = make([]timeEntry, 0, count)
	for i := range count {
		timestamp := int64(binary.BigEndian.Uint64(b[i*timeEntryBytes:]))
		relative := binary.BigEndian.Uint32(b[i*timeEntryBytes+8:])
		e := timeEntry{timestamp: timestamp, offset: baseOffset + int64(relative)}
		if relative > relativeOffsetMax || timestamp <= noTimestamp {
			return x, fmt.Errorf("%w: time index entry %d is out of range", errBadData, i)
		}
		if i > 0 && (e.timestamp <= x.entries[i-1].timestamp || e.offset <= x.entries[i-1].offset) {
			return x, fmt.Errorf("%w: time index entry %d does not increase", errBadData, i)
		}
		x.entries = append(x.entries, e)
	}
	return x, nil
}
