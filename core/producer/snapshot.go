package producer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// A snapshot is the state as of a log offset: every batch below the offset
// is reflected in it. Format (big-endian): magic "SPS1", offset int64, entry
// count uint32, entries, then a CRC-32C of everything before it. Each entry:
// producer id int64, epoch int16, last update int64, batch count uint8, and
// per batch: first sequence int32, last sequence int32, first offset int64,
// last offset int64, max timestamp int64.

var snapshotMagic = [4]byte{'S', 'P', 'S', '1'}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrBadSnapshot reports a snapshot that is torn or corrupt; the caller
// falls back to an older snapshot or a longer replay.
var ErrBadSnapshot = errors.New("producer: bad snapshot")

// EncodeSnapshot serializes the state as of offset.
func (s *State) EncodeSnapshot(offset int64) []byte {
	entries := s.Entries()
	b := append([]byte(nil), snapshotMagic[:]...)
	b = binary.BigEndian.AppendUint64(b, uint64(offset))
	b = binary.BigEndian.AppendUint32(b, uint32(len(entries)))
	for _, e := range entries {
		b = binary.BigEndian.AppendUint64(b, uint64(e.ProducerID))
		b = binary.BigEndian.AppendUint16(b, uint16(e.Epoch))
		b = binary.BigEndian.AppendUint64(b, uint64(e.LastUpdate))
		b = append(b, byte(len(e.Batches)))
		for _, m := range e.Batches {
			b = binary.BigEndian.AppendUint32(b, uint32(m.FirstSequence))
			b = binary.BigEndian.AppendUint32(b, uint32(m.LastSequence))
			b = binary.BigEndian.AppendUint64(b, uint64(m.FirstOffset))
			b = binary.BigEndian.AppendUint64(b, uint64(m.LastOffset))
			b = binary.BigEndian.AppendUint64(b, uint64(m.MaxTimestamp))
		}
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

const (
	snapshotHeaderBytes = 4 + 8 + 4
	entryFixedBytes     = 8 + 2 + 8 + 1
	batchMetadataBytes  = 4 + 4 + 8 + 8 + 8
)

// DecodeSnapshot reads a snapshot, returning the state and its offset.
func DecodeSnapshot(b []byte) (*State, int64, error) {
	if len(b) < snapshotHeaderBytes+4 || [4]byte(b[:4]) != snapshotMagic {
		return nil, 0, ErrBadSnapshot
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, 0, fmt.Errorf("%w: checksum mismatch", ErrBadSnapshot)
	}
	offset := int64(binary.BigEndian.Uint64(body[4:]))
	count := binary.BigEndian.Uint32(body[12:])
	rest := body[snapshotHeaderBytes:]
	s := NewState()
	for range count {
		if len(rest) < entryFixedBytes {
			return nil, 0, fmt.Errorf("%w: entry cut off", ErrBadSnapshot)
		}
		e := &Entry{
			ProducerID: int64(binary.BigEndian.Uint64(rest)),
			Epoch:      int16(binary.BigEndian.Uint16(rest[8:])),
			LastUpdate: int64(binary.BigEndian.Uint64(rest[10:])),
		}
		batches := int(rest[18])
		rest = rest[entryFixedBytes:]
		if batches > BatchesRetained || len(rest) < batches*batchMetadataBytes {
			return nil, 0, fmt.Errorf("%w: batch list cut off", ErrBadSnapshot)
		}
		for range batches {
			e.Batches = append(e.Batches, BatchMetadata{
				FirstSequence: int32(binary.BigEndian.Uint32(rest)),
				LastSequence:  int32(binary.BigEndian.Uint32(rest[4:])),
				FirstOffset:   int64(binary.BigEndian.Uint64(rest[8:])),
				LastOffset:    int64(binary.BigEndian.Uint64(rest[16:])),
				MaxTimestamp:  int64(binary.BigEndian.Uint64(rest[24:])),
			})
			rest = rest[batchMetadataBytes:]
		}
		s.producers[e.ProducerID] = e
	}
	if len(rest) != 0 {
		return nil, 0, fmt.Errorf("%w: trailing bytes", ErrBadSnapshot)
	}
	return s, offset, nil
}
