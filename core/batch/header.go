package batch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Offsets of the RecordBatch v2 fields, from KIP-98's on-disk format:
//
//	baseOffset int64, batchLength int32, partitionLeaderEpoch int32,
//	magic int8, crc uint32, attributes int16, lastOffsetDelta int32,
//	baseTimestamp int64, maxTimestamp int64, producerId int64,
//	producerEpoch int16, baseSequence int32, recordCount int32, records...
//
// batchLength counts the bytes after itself; the CRC (CRC-32C) covers
// everything from attributes to the end, so baseOffset, batchLength,
// partitionLeaderEpoch and magic can be rewritten without recomputing it.
const (
	offsetBaseOffset      = 0
	offsetBatchLength     = 8
	offsetLeaderEpoch     = 12
	offsetMagic           = 16
	offsetCRC             = 17
	offsetAttributes      = 21
	offsetLastOffsetDelta = 23
	offsetBaseTimestamp   = 27
	offsetMaxTimestamp    = 35
	offsetProducerID      = 43
	offsetProducerEpoch   = 51
	offsetBaseSequence    = 53
	offsetRecordCount     = 57

	// HeaderSize is the fixed size of a v2 batch header.
	HeaderSize = 61

	// LengthPrefixSize is what precedes batchLength's count:
	// baseOffset and batchLength themselves.
	LengthPrefixSize = 12

	// Magic is the only batch format Sluice stores.
	Magic = 2
)

// Attribute bits.
const (
	CompressionMask  = 0x07
	TimestampLogTime = 0x08
	Transactional    = 0x10
	Control          = 0x20
)

// Compression codecs, as stored in the low attribute bits.
const (
	CompressionNone   = 0
	CompressionGzip   = 1
	CompressionSnappy = 2
	CompressionLZ4    = 3
	CompressionZstd   = 4
)

// NoProducerID marks a batch from a producer that is not idempotent.
const NoProducerID = -1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors that say what is wrong with a batch. Callers map them to Kafka
// error codes (CORRUPT_MESSAGE, UNSUPPORTED_VERSION...).
var (
	ErrShort       = errors.New("batch: shorter than its header or its stated length")
	ErrMagic       = errors.New("batch: magic is not 2")
	ErrCRC         = errors.New("batch: CRC mismatch")
	ErrLength      = errors.New("batch: stated length is impossible")
	ErrRecordCount = errors.New("batch: record count does not match last offset delta")
	ErrCompression = errors.New("batch: unknown compression codec")
)

// Header is a parsed batch header.
type Header struct {
	BaseOffset      int64
	Length          int32 // batchLength: the bytes after the length field
	LeaderEpoch     int32
	Magic           int8
	CRC             uint32
	Attributes      int16
	LastOffsetDelta int32
	BaseTimestamp   int64
	MaxTimestamp    int64
	ProducerID      int64
	ProducerEpoch   int16
	BaseSequence    int32
	RecordCount     int32
}

// Size is the whole batch's size in bytes.
func (h Header) Size() int { return LengthPrefixSize + int(h.Length) }

// LastOffset is the offset of the batch's last record.
func (h Header) LastOffset() int64 { return h.BaseOffset + int64(h.LastOffsetDelta) }

// NextOffset is the offset after the batch.
func (h Header) NextOffset() int64 { return h.LastOffset() + 1 }

// Compression is the batch's codec.
func (h Header) Compression() int { return int(h.Attributes & CompressionMask) }

// IsTransactional reports the transactional attribute.
func (h Header) IsTransactional() bool { return h.Attributes&Transactional != 0 }

// IsControl reports the control attribute (transaction markers).
func (h Header) IsControl() bool { return h.Attributes&Control != 0 }

// LastSequence is the sequence number of the batch's last record, wrapping
// at the int32 limit as Kafka's producers do.
func (h Header) LastSequence() int32 {
	return IncrementSequence(h.BaseSequence, h.LastOffsetDelta)
}

// IncrementSequence adds delta to a producer sequence, wrapping past
// MaxInt32 to 0 as Kafka does.
func IncrementSequence(sequence, delta int32) int32 {
	if sequence > (1<<31-1)-delta {
		return delta - ((1<<31 - 1) - sequence) - 1
	}
	return sequence + delta
}

// Parse reads the header at the start of b. It checks that the header is
// present and its stated length is plausible; it does not check the CRC or
// that the whole batch is in b (see Validate).
func Parse(b []byte) (h Header, err error) {
	// Into the named result, which is the caller's: one copy fewer.
	err = ParseInto(&h, b)
	return h, err
}

// ParseInto is Parse storing the header in *h, for a caller that keeps it
// in a struct of its own, such as a reader walking the batches of a
// segment: returned by value, the 64-byte header is built aside and copied
// at least once more, and the copy, reading back in wide loads what was
// just stored field by field, stalls; it showed in the simulator's
// profile. On an error *h is the zero Header or, past the checks of
// length and magic, what the bytes say.
func ParseInto(h *Header, b []byte) error {
	if len(b) > offsetMagic && int8(b[offsetMagic]) != Magic {
		// Checked first: an old-format message set (magic 0 or 1) may
		// be shorter than a v2 header, and is a wrong format, not a
		// torn batch.
		*h = Header{}
		return ErrMagic
	}
	if len(b) < HeaderSize {
		*h = Header{}
		return ErrShort
	}
	// As an array the header's length is known, so the field reads
	// below need no bounds checks.
	a := (*[HeaderSize]byte)(b)
	h.BaseOffset = int64(binary.BigEndian.Uint64(a[offsetBaseOffset:]))
	h.Length = int32(binary.BigEndian.Uint32(a[offsetBatchLength:]))
	h.LeaderEpoch = int32(binary.BigEndian.Uint32(a[offsetLeaderEpoch:]))
	h.Magic = int8(a[offsetMagic])
	h.CRC = binary.BigEndian.Uint32(a[offsetCRC:])
	h.Attributes = int16(binary.BigEndian.Uint16(a[offsetAttributes:]))
	h.LastOffsetDelta = int32(binary.BigEndian.Uint32(a[offsetLastOffsetDelta:]))
	h.BaseTimestamp = int64(binary.BigEndian.Uint64(a[offsetBaseTimestamp:]))
	h.MaxTimestamp = int64(binary.BigEndian.Uint64(a[offsetMaxTimestamp:]))
	h.ProducerID = int64(binary.BigEndian.Uint64(a[offsetProducerID:]))
	h.ProducerEpoch = int16(binary.BigEndian.Uint16(a[offsetProducerEpoch:]))
	h.BaseSequence = int32(binary.BigEndian.Uint32(a[offsetBaseSequence:]))
	h.RecordCount = int32(binary.BigEndian.Uint32(a[offsetRecordCount:]))
	if h.Magic != Magic {
		return ErrMagic
	}
	if int(h.Length) < HeaderSize-LengthPrefixSize {
		return ErrLength
	}
	return nil
}

// Validate checks one whole batch: b must hold exactly one batch, with magic
// 2, a matching CRC, a known codec, and a record count that agrees with its
// last offset delta. It is what a batch must pass before it is stored.
func Validate(b []byte) (Header, error) {
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
	if h.RecordCount <= 0 || h.LastOffsetDelta != h.RecordCount-1 {
		return h, ErrRecordCount
	}
	return h, nil
}

// ComputeCRC computes the CRC-32C a batch should carry.
func ComputeCRC(b []byte) uint32 {
	return crc32.Checksum(b[offsetAttributes:], castagnoli)
}

// CheckCRC reports whether a whole batch's CRC matches its bytes.
func CheckCRC(b []byte) bool {
	return len(b) >= HeaderSize && ComputeCRC(b) == binary.BigEndian.Uint32(b[offsetCRC:])
}

// SetBaseOffset stamps the batch's base offset in place.
func SetBaseOffset(b []byte, offset int64) {
	binary.BigEndian.PutUint64(b[offsetBaseOffset:], uint64(offset))
}

// SetLeaderEpoch stamps the partition leader epoch in place.
func SetLeaderEpoch(b []byte, epoch int32) {
	binary.BigEndian.PutUint32(b[offsetLeaderEpoch:], uint32(epoch))
}

// SetLogAppendTime marks the batch's timestamps as the broker's append time
// and sets its max timestamp to it, as Kafka does for topics with
// message.timestamp.type=LogAppendTime (consumers then read every record's
// timestamp as this one). Both fields are under the CRC, which is
// recomputed.
func SetLogAppendTime(b []byte, timestamp int64) {
	attributes := binary.BigEndian.Uint16(b[offsetAttributes:]) | TimestampLogTime
	binary.BigEndian.PutUint16(b[offsetAttributes:], attributes)
	binary.BigEndian.PutUint64(b[offsetMaxTimestamp:], uint64(timestamp))
	binary.BigEndian.PutUint32(b[offsetCRC:], ComputeCRC(b))
}

// SetMaxTimestamp sets the batch's max timestamp, as Kafka's broker sets
// it from the records it validated (setMaxTimestamp), and recomputes the
// CRC it is under.
func SetMaxTimestamp(b []byte, timestamp int64) {
	binary.BigEndian.PutUint64(b[offsetMaxTimestamp:], uint64(timestamp))
	binary.BigEndian.PutUint32(b[offsetCRC:], ComputeCRC(b))
}

// minimumLength is the smallest length prefix Kafka's batch iterator takes
// for a batch (Records.MIN_RECORD_OVERHEAD); below it the bytes are
// corrupt, not short.
const minimumLength = 14

// Frames walks b as Kafka's produce validation walks a partition's
// records (ByteBufferLogInputStream): one batch per length prefix, for as
// long as the bytes hold the whole batch it announces. It returns how many
// whole batches b holds and the first, or ErrLength for a length prefix
// too small to be a batch's. Bytes left over after the last whole batch
// are not a batch.
func Frames(b []byte) (count int, first []byte, err error) {
	for len(b) >= offsetMagic+1 {
		length := int64(int32(binary.BigEndian.Uint32(b[offsetBatchLength:])))
		if length < minimumLength {
			return count, first, fmt.Errorf("%w: a batch of length %d", ErrLength, length)
		}
		size := LengthPrefixSize + length
		if int64(len(b)) < size {
			break
		}
		if count == 0 {
			first = b[:size]
		}
		count++
		b = b[size:]
	}
	return count, first, nil
}

// MagicOf is the magic byte of a batch whose first 17 bytes b holds (as
// Frames guarantees of the batches it returns).
func MagicOf(b []byte) int8 { return int8(b[offsetMagic]) }

// CompressionOf is the codec of a batch whose header b holds, or -1 when b
// is shorter than the attributes.
func CompressionOf(b []byte) int {
	if len(b) < offsetAttributes+2 {
		return -1
	}
	return int(binary.BigEndian.Uint16(b[offsetAttributes:]) & CompressionMask)
}
