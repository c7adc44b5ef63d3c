package batch

import (
	"encoding/binary"
	"errors"
)

// ErrRecordOffsets reports records whose offset deltas are not their
// positions in the batch.
var ErrRecordOffsets = errors.New("batch: record offset deltas are not 0, 1, 2, ...")

// ErrKeyless reports a record without a key where every record needs one.
var ErrKeyless = errors.New("batch: a record without a key")

// NoTimestamp is a record's or batch's timestamp when it has none.
const NoTimestamp = -1

// RecordTimestamps is the range of a batch's record timestamps that
// CheckRecords found: the smallest and largest other than NoTimestamp,
// both NoTimestamp if no record has one.
type RecordTimestamps struct {
	Min, Max int64
}

// CheckRecords walks the count records of an uncompressed records section
// without copying any: each must be well formed, the section must hold
// exactly count of them, and each record's offset delta must be its
// position, as every v2 producer writes them. A broker that stores
// batches as produced must check this much, as Kafka's does record by
// record: a record it cannot parse would be served to every consumer, and
// one whose delta runs past the header's last offset would be read at an
// offset the next batch holds. With requireKeys a keyless record is
// refused (compacted topics). It returns the range of the records'
// timestamps (baseTimestamp plus each delta), which Kafka validates and
// takes the batch's max timestamp from, record by record.
func CheckRecords(section []byte, count int32, requireKeys bool, baseTimestamp int64) (RecordTimestamps, error) {
	timestamps := RecordTimestamps{Min: NoTimestamp, Max: NoTimestamp}
	if count < 0 || int(count) > len(section) {
		return timestamps, errRecord
	}
	rest := section
	for i := range count {
		length, n := binary.Varint(rest)
		if n <= 0 || length < 0 || int64(len(rest)-n) < length {
			return timestamps, errRecord
		}
		body := rest[n : n+int(length)]
		rest = rest[n+int(length):]
		timestampDelta, offsetDelta, keyed, err := checkRecord(body)
		if err != nil {
			return timestamps, err
		}
		if offsetDelta != int64(i) {
			return timestamps, ErrRecordOffsets
		}
		if requireKeys && !keyed {
			return timestamps, ErrKeyless
		}
		if at := baseTimestamp + timestampDelta; at != NoTimestamp {
			if timestamps.Min == NoTimestamp || at < timestamps.Min {
				timestamps.Min = at
			}
			if timestamps.Max == NoTimestamp || at > timestamps.Max {
				timestamps.Max = at
			}
		}
	}
	if len(rest) != 0 {
		return timestamps, errRecord
	}
	return timestamps, nil
}

// checkRecord walks one record's body (decodeRecord's layout) and returns
// its timestamp and offset deltas and whether it has a key.
func checkRecord(body []byte) (timestampDelta, offsetDelta int64, keyed bool, err error) {
	d := decoder{buf: body}
	d.byte() // attributes
	timestampDelta = d.varint()
	offsetDelta = d.varint()
	keyLength := d.varint()
	d.skip(keyLength)
	d.skip(d.varint()) // value
	headers := d.varint()
	if headers < 0 || headers > int64(len(body)) {
		return 0, 0, false, errRecord
	}
	for range headers {
		keyBytes := d.varint()
		if keyBytes < 0 {
			return 0, 0, false, errRecord // a header's key is a string, never null
		}
		d.skip(keyBytes)
		d.skip(d.varint())
	}
	if d.failed || len(d.buf) != 0 {
		return 0, 0, false, errRecord
	}
	return timestampDelta, offsetDelta, keyLength >= 0, nil
}

// skip passes over length bytes of a varint-length field: -1 is null,
// any other negative length malformed.
func (d *decoder) skip(length int64) {
	switch {
	case d.failed || length == -1:
	case length < -1 || int64(len(d.buf)) < length:
		d.failed = true
	default:
		d.buf = d.buf[length:]
	}
}
