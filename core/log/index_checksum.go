package log

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Index files end with a CRC-32C of their entries (4 bytes, big-endian,
// seeded by the file's kind: indexKind), which Kafka's do not. Recovery
// trusts the index files of a segment below the recovery point, and two
// writers put them there before any sync covers them: the last step of a
// compaction swap, whose segment already lay below it, and recovery
// repairing a damaged one. A crash before the sync can leave such a file
// torn, an entry cut short and zero-filled, and Kafka's sanity checks pass
// what is left: a time index entry naming offset 144 for a segment whose
// first batch, after compaction, is 146, or a timestamp of 2^40
// (TestRecoveryNeverTrustsATornIndexFile), and a truncation's replay later
// met the real entry after the torn one and panicked (log seed 711061).
// With the checksum such a file is bad data and recovery scans the
// segment. A flip in flight fails it too, so one read that passes is
// enough (readChecked), where a file with no check of its own needs three
// that agree.
const indexChecksumBytes = 4

// The largest index files: indexEntriesMax entries and the checksum.
const (
	offsetIndexBytesMax = indexEntriesMax*offsetEntryBytes + indexChecksumBytes
	timeIndexBytesMax   = indexEntriesMax*timeEntryBytes + indexChecksumBytes
)

// indexKind is the kind of an index file, whose name seeds its checksum:
// the CRC-32C of nothing is zero, so unseeded, four zero bytes would pass
// for an empty index, and neither kind of file passes for the other.
type indexKind struct {
	name string
	seed uint32
}

var (
	offsetIndexKind = newIndexKind("offset index")
	timeIndexKind   = newIndexKind("time index")
)

func newIndexKind(name string) indexKind {
	return indexKind{name: name, seed: crc32.Checksum([]byte("sluice "+name+"\n"), castagnoli)}
}

// checksum is the checksum of an index file of this kind holding entries.
func (k indexKind) checksum(entries []byte) uint32 {
	return crc32.Update(k.seed, castagnoli, entries)
}

// appendChecksum appends the checksum of b[entriesStart:].
func (k indexKind) appendChecksum(b []byte, entriesStart int) []byte {
	return binary.BigEndian.AppendUint32(b, k.checksum(b[entriesStart:]))
}

// entries returns the entries of an index file's bytes, once its
// checksum holds.
func (k indexKind) entries(b []byte) ([]byte, error) {
	if len(b) < indexChecksumBytes {
		return nil, fmt.Errorf("%w: %s file of %d bytes has no checksum", errBadData, k.name, len(b))
	}
	entries, sum := b[:len(b)-indexChecksumBytes], b[len(b)-indexChecksumBytes:]
	if k.checksum(entries) != binary.BigEndian.Uint32(sum) {
		return nil, fmt.Errorf("%w: %s file of %d bytes fails its checksum", errBadData, k.name, len(b))
	}
	return entries, nil
}
