package batch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// Record is one record of a batch, in the form tests, the simulator's clients
// and compaction need. A nil Key or Value is Kafka's null.
type Record struct {
	OffsetDelta    int32
	TimestampDelta int64
	Key            []byte
	Value          []byte
	Headers        []RecordHeader
}

// RecordHeader is a record's user header.
type RecordHeader struct {
	Key   string
	Value []byte
}

// Spec describes a batch to build.
type Spec struct {
	BaseOffset    int64
	LeaderEpoch   int32
	Attributes    int16
	BaseTimestamp int64
	MaxTimestamp  int64 // 0: BaseTimestamp plus the largest TimestampDelta
	ProducerID    int64 // NoProducerID when not idempotent
	ProducerEpoch int16
	BaseSequence  int32
	Records       []Record // OffsetDelta is taken from the position
}

// Build encodes an uncompressed v2 batch with a correct CRC. It measures
// the batch first and writes it into one buffer of exactly its size:
// every record is written once, straight into the batch, not into a
// scratch buffer to be copied behind its length.
func Build(spec Spec) []byte {
	size := HeaderSize
	for i, r := range spec.Records {
		n := recordBodySize(i, r)
		size += varintSize(int64(n)) + n
	}
	b := make([]byte, HeaderSize, size)
	maxTimestamp := spec.BaseTimestamp
	for i, r := range spec.Records {
		b = binary.AppendVarint(b, int64(recordBodySize(i, r)))
		b = append(b, 0) // attributes
		b = binary.AppendVarint(b, r.TimestampDelta)
		b = binary.AppendVarint(b, int64(i))
		b = appendVarBytes(b, r.Key)
		b = appendVarBytes(b, r.Value)
		b = binary.AppendVarint(b, int64(len(r.Headers)))
		for _, h := range r.Headers {
			b = appendVarString(b, h.Key)
			b = appendVarBytes(b, h.Value)
		}
		if spec.BaseTimestamp+r.TimestampDelta > maxTimestamp {
			maxTimestamp = spec.BaseTimestamp + r.TimestampDelta
		}
	}
	if len(b) != size {
		panic(fmt.Sprintf("batch: built %d bytes, measured %d", len(b), size))
	}
	if spec.MaxTimestamp != 0 {
		maxTimestamp = spec.MaxTimestamp
	}
	binary.BigEndian.PutUint64(b[offsetBaseOffset:], uint64(spec.BaseOffset))
	binary.BigEndian.PutUint32(b[offsetBatchLength:], uint32(len(b)-LengthPrefixSize))
	binary.BigEndian.PutUint32(b[offsetLeaderEpoch:], uint32(spec.LeaderEpoch))
	b[offsetMagic] = Magic
	binary.BigEndian.PutUint16(b[offsetAttributes:], uint16(spec.Attributes))
	binary.BigEndian.PutUint32(b[offsetLastOffsetDelta:], uint32(len(spec.Records)-1))
	binary.BigEndian.PutUint64(b[offsetBaseTimestamp:], uint64(spec.BaseTimestamp))
	binary.BigEndian.PutUint64(b[offsetMaxTimestamp:], uint64(maxTimestamp))
	binary.BigEndian.PutUint64(b[offsetProducerID:], uint64(spec.ProducerID))
	binary.BigEndian.PutUint16(b[offsetProducerEpoch:], uint16(spec.ProducerEpoch))
	binary.BigEndian.PutUint32(b[offsetBaseSequence:], uint32(spec.BaseSequence))
	binary.BigEndian.PutUint32(b[offsetRecordCount:], uint32(len(spec.Records)))
	binary.BigEndian.PutUint32(b[offsetCRC:], ComputeCRC(b))
	return b
}

// recordBodySize is the encoded size of record r at index i, without the
// length that precedes it: attributes, timestamp delta, offset delta, key,
// value and headers.
func recordBodySize(i int, r Record) int {
	n := 1 + varintSize(r.TimestampDelta) + varintSize(int64(i)) +
		varBytesSize(len(r.Key), r.Key == nil) + varBytesSize(len(r.Value), r.Value == nil) +
		varintSize(int64(len(r.Headers)))
	for _, h := range r.Headers {
		n += varBytesSize(len(h.Key), false) + varBytesSize(len(h.Value), h.Value == nil)
	}
	return n
}

// varintSize is len(binary.AppendVarint(nil, v)): seven bits per byte of
// the zigzag encoding.
func varintSize(v int64) int {
	zigzag := uint64(v) << 1
	if v < 0 {
		zigzag = ^zigzag
	}
	return (bits.Len64(zigzag|1) + 6) / 7
}

// varBytesSize is the size appendVarBytes writes for n bytes, or for
// Kafka's null.
func varBytesSize(n int, null bool) int {
	if null {
		return varintSize(-1)
	}
	return varintSize(int64(n)) + n
}

func appendVarBytes(b, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(b, -1)
	}
	b = binary.AppendVarint(b, int64(len(v)))
	return append(b, v...)
}

// appendVarString is appendVarBytes for a header key, which is never null.
func appendVarString(b []byte, v string) []byte {
	b = binary.AppendVarint(b, int64(len(v)))
	return append(b, v...)
}

// ErrCompressed reports a batch whose records cannot be read here because
// they are compressed.
var ErrCompressed = errors.New("batch: records are compressed")

var errRecord = errors.New("batch: malformed record")

// Records decodes the records of one whole uncompressed batch. The returned
// slices alias b.
func Records(b []byte) ([]Record, error) {
	h, err := Parse(b)
	if err != nil {
		return nil, err
	}
	if h.Size() > len(b) {
		return nil, ErrShort
	}
	if h.Compression() != CompressionNone {
		return nil, ErrCompressed
	}
	// SplitRecords without its encoded bytes, which nobody here needs.
	section, count := b[HeaderSize:h.Size()], h.RecordCount
	if count < 0 || int(count) > len(section) {
		return nil, errRecord
	}
	records := make([]Record, count)
	for i := range records {
		_, after, err := splitRecord(&records[i], section)
		if err != nil {
			return nil, err
		}
		section = after
	}
	if len(section) != 0 {
		return nil, errRecord
	}
	return records, nil
}

// decodeRecord decodes a record's body (after its length) into *r, which
// must be the zero Record.
func decodeRecord(r *Record, body []byte) error {
	d := decoder{buf: body}
	d.byte() // attributes, unused in v2
	r.TimestampDelta = d.varint()
	r.OffsetDelta = int32(d.varint())
	r.Key = d.varBytes()
	r.Value = d.varBytes()
	headerCount := d.varint()
	if headerCount < 0 || headerCount > int64(len(body)) {
		return errRecord
	}
	for range headerCount {
		key := d.varBytes()
		value := d.varBytes()
		r.Headers = append(r.Headers, RecordHeader{Key: string(key), Value: value})
	}
	if d.failed || len(d.buf) != 0 {
		return errRecord
	}
	return nil
}

type decoder struct {
	buf    []byte
	failed bool
}

func (d *decoder) byte() byte {
	if len(d.buf) < 1 {
		d.failed = true
		return 0
	}
	v := d.buf[0]
	d.buf = d.buf[1:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.buf)
	if n <= 0 {
		d.failed = true
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) varBytes() []byte {
	length := d.varint()
	if length < 0 || d.failed {
		return nil
	}
	if int64(len(d.buf)) < length {
		d.failed = true
		return nil
	}
	v := d.buf[:length]
	d.buf = d.buf[length:]
	return v
}
