package batch

import (
	"encoding/binary"
	"fmt"
)

// Batches a compacted log holds differ from produced ones in one way: log
// compaction removes records from a batch but keeps the batch's base
// offset, base timestamp and last offset delta (Kafka does the same, so
// that a producer's last sequence number survives, KAFKA-5793), so a
// compacted batch may hold fewer records than its offsets span, and even
// none at all (KAFKA-5443). The records it keeps keep their offset and
// timestamp deltas, which is why they can be copied byte for byte.

// ValidateCompacted is Validate for a batch read back from a compacted
// log, such as a follower receives from its leader: the record count may
// be anything from 0 to LastOffsetDelta+1. Produced batches must pass
// Validate instead.
func ValidateCompacted(b []byte) (Header, error) {
	h, err := Parse(b)
	if err != nil {
		return h, err
	}
	if h.Size() != len(b) {
		return h, fmt.Errorf("%w: header says %d bytes, have %d", ErrShort, h.Size(), len(b))
	}
	if ComputeCRC(b) != h.CRC {
		return h, ErrCRC
	}
	if h.Compression() > CompressionZstd {
		return h, ErrCompression
	}
	if h.LastOffsetDelta < 0 || h.RecordCount < 0 || int64(h.RecordCount) > int64(h.LastOffsetDelta)+1 {
		return h, ErrRecordCount
	}
	return h, nil
}

// RecordsSection returns the bytes after the header of one whole batch:
// the records, compressed with the batch's codec if it has one.
func RecordsSection(b []byte) ([]byte, error) {
	h, err := Parse(b)
	if err != nil {
		return nil, err
	}
	if h.Size() > len(b) {
		return nil, ErrShort
	}
	return b[HeaderSize:h.Size()], nil
}

// RawRecord is one record of an uncompressed records section: its decoded
// fields and its encoded bytes, length prefix included. The bytes can be
// copied as they are into another batch with the same base offset and base
// timestamp.
type RawRecord struct {
	Record
	Encoded []byte
}

// SplitRecords decodes an uncompressed records section holding count
// records. The returned slices alias section.
func SplitRecords(section []byte, count int32) ([]RawRecord, error) {
	return SplitRecordsInto(nil, section, count)
}

// SplitRecordsInto is SplitRecords decoding into records[:0], grown if it
// is too short, for a caller that splits batch after batch (compaction)
// and reuses one slice: what the records of an earlier call pointed into
// is gone once it is called again.
func SplitRecordsInto(records []RawRecord, section []byte, count int32) ([]RawRecord, error) {
	if count < 0 || int(count) > len(section) {
		return nil, errRecord
	}
	if cap(records) < int(count) {
		records = make([]RawRecord, count)
	}
	records = records[:count]
	clear(records) // splitRecord decodes into zero Records
	rest := section
	for i := range records {
		encoded, after, err := splitRecord(&records[i].Record, rest)
		if err != nil {
			return nil, err
		}
		rest = after
		records[i].Encoded = encoded
	}
	if len(rest) != 0 {
		return nil, errRecord
	}
	return records, nil
}

// splitRecord decodes the record at the start of rest into *r and returns
// its encoded bytes (length prefix included) and the bytes after it. The
// record is decoded where the caller keeps it: a Record of five fields
// returned by value is built aside and copied, with a stall, at every
// return (see ParseInto).
func splitRecord(r *Record, rest []byte) (encoded, after []byte, err error) {
	length, n := binary.Varint(rest)
	if n <= 0 || length < 0 || int64(len(rest)-n) < length {
		return nil, nil, errRecord
	}
	end := n + int(length)
	if err := decodeRecord(r, rest[n:end]); err != nil {
		return nil, nil, err
	}
	return rest[:end], rest[end:], nil
}

// Rebuild encodes a batch with h's header fields (base offset, leader
// epoch, attributes, last offset delta, timestamps, producer fields) around
// a new records section holding recordCount records, already compressed if
// h's attributes say so, and computes its length and CRC. Compaction uses
// it to write a batch with some of its records removed.
func Rebuild(h Header, section []byte, recordCount int32) []byte {
	b := make([]byte, HeaderSize, HeaderSize+len(section))
	binary.BigEndian.PutUint64(b[offsetBaseOffset:], uint64(h.BaseOffset))
	binary.BigEndian.PutUint32(b[offsetBatchLength:], uint32(HeaderSize+len(section)-LengthPrefixSize))
	binary.BigEndian.PutUint32(b[offsetLeaderEpoch:], uint32(h.LeaderEpoch))
	b[offsetMagic] = Magic
	binary.BigEndian.PutUint16(b[offsetAttributes:], uint16(h.Attributes))
	binary.BigEndian.PutUint32(b[offsetLastOffsetDelta:], uint32(h.LastOffsetDelta))
	binary.BigEndian.PutUint64(b[offsetBaseTimestamp:], uint64(h.BaseTimestamp))
	binary.BigEndian.PutUint64(b[offsetMaxTimestamp:], uint64(h.MaxTimestamp))
	binary.BigEndian.PutUint64(b[offsetProducerID:], uint64(h.ProducerID))
	binary.BigEndian.PutUint16(b[offsetProducerEpoch:], uint16(h.ProducerEpoch))
	binary.BigEndian.PutUint32(b[offsetBaseSequence:], uint32(h.BaseSequence))
	binary.BigEndian.PutUint32(b[offsetRecordCount:], uint32(recordCount))
	b = append(b, section...)
	binary.BigEndian.PutUint32(b[offsetCRC:], ComputeCRC(b))
	return b
}

// Empty returns the batch Kafka keeps in place of one whose records
// compaction removed but whose header must stay (DefaultRecordBatch's
// writeEmptyHeader): same offsets, epoch, producer fields and transactional
// and control flags, no records, uncompressed, both timestamps set to the
// original's max timestamp.
func Empty(h Header) []byte {
	h.Attributes &^= CompressionMask
	h.BaseTimestamp = h.MaxTimestamp
	return Rebuild(h, nil, 0)
}
