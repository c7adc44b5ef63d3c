package compat

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// The compression codecs, named as Kafka's compression.type names them.
const (
	codecNone   = "none"
	codecGzip   = "gzip"
	codecSnappy = "snappy"
	codecLz4    = "lz4"
	codecZstd   = "zstd"
)

// codecsAll is every codec Kafka defines, in the order the plan uses.
var codecsAll = []string{codecNone, codecGzip, codecSnappy, codecLz4, codecZstd}

const (
	// roundTripPartitions is the partition count of every round-trip topic.
	roundTripPartitions = 3
	// keysPerCodec and roundsPerCodec shape the keyed records: every key
	// is sent roundsPerCodec times with each codec, so a key's records
	// span batches and codecs and must still share one partition.
	keysPerCodec   = 10
	roundsPerCodec = 3
	// bigValueBytes is the one large record's value: 900 KiB, under the
	// broker's default max.message.bytes (1048588) and every client's
	// default batch limit (about 1 MB), but far above a typical batch.
	bigValueBytes = 900 << 10
	// bigValueSeed fixes the large value's contents, so a failure
	// replays with the same bytes.
	bigValueSeed = 20240901
)

// header is one record header. A nil Value is Kafka's null header value,
// distinct from an empty one.
type header struct {
	Key   string
	Value []byte
}

// record is what a client sends and reads back. A nil Key or Value is
// Kafka's null, distinct from an empty one: the null value is a tombstone.
type record struct {
	Key     []byte
	Value   []byte
	Headers []header
}

// plannedRecord is a record a client is asked to produce, with the codec
// its batch must use.
type plannedRecord struct {
	record
	Codec string
}

// roundTripPlan is the list of records every client produces, in order:
// for each codec, keyed records in rounds, then one record with a null
// key, one with an empty key, one with an empty value and a tombstone
// (null value); last, one large record without compression. Every record
// is distinct, so a record read back identifies the one that was sent.
// Every record carries the headers codec=<codec> and empty=<empty>, which
// a client like kcat, whose headers apply to a whole run, can send too.
func roundTripPlan(codecs []string) []plannedRecord {
	var plan []plannedRecord
	for _, codec := range codecs {
		headers := []header{{Key: "codec", Value: []byte(codec)}, {Key: "empty", Value: []byte{}}}
		add := func(key, value []byte) {
			plan = append(plan, plannedRecord{record: record{Key: key, Value: value, Headers: headers}, Codec: codec})
		}
		for round := range roundsPerCodec {
			for key := range keysPerCodec {
				add([]byte(fmt.Sprintf("key-%d", key)), []byte(fmt.Sprintf("value-%s-round%d-key%d", codec, round, key)))
			}
		}
		add(nil, []byte("nullkey-"+codec))
		add([]byte{}, []byte("emptykey-"+codec))
		add([]byte("emptyvalue-"+codec), []byte{})
		add([]byte("tombstone-"+codec), nil)
	}
	plan = append(plan, plannedRecord{
		record: record{
			Key:     []byte("big"),
			Value:   bigValue(),
			Headers: []header{{Key: "codec", Value: []byte(codecNone)}, {Key: "empty", Value: []byte{}}},
		},
		Codec: codecNone,
	})
	return plan
}

// bigValue is the large record's value: printable, without newlines or
// colons (kcat reads records as lines split at a colon), and from a fixed
// seed so it is the same on every run.
func bigValue() []byte {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/"
	random := rand.New(rand.NewPCG(bigValueSeed, bigValueSeed))
	value := make([]byte, bigValueBytes)
	for i := range value {
		value[i] = alphabet[random.IntN(len(alphabet))]
	}
	return value
}

// producedRecord is what a client reported about a record it produced:
// where it landed, when the client says (-1 when it does not).
type producedRecord struct {
	record
	Partition int32
	Offset    int64
}

// consumedRecord is a record a client read back, where it read it.
type consumedRecord struct {
	record
	Partition int32
	Offset    int64
}

// String names the record for failure messages and is its identity when
// matching what was read to what was sent: byte-exact, nil apart from
// empty, long values summarized by length and hash.
func (r record) String() string {
	var b strings.Builder
	b.WriteString("key=")
	b.WriteString(describeBytes(r.Key))
	b.WriteString(" value=")
	b.WriteString(describeBytes(r.Value))
	b.WriteString(" headers=[")
	for i, h := range r.Headers {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(strconv.Quote(h.Key))
		b.WriteString(":")
		b.WriteString(describeBytes(h.Value))
	}
	b.WriteString("]")
	return b.String()
}

// withEmptyAsNull is r as a client that reads every empty byte string as
// null (kafka-go) sees it: keys, values and header values.
func (r record) withEmptyAsNull() record {
	collapse := func(b []byte) []byte {
		if len(b) == 0 {
			return nil
		}
		return b
	}
	out := record{Key: collapse(r.Key), Value: collapse(r.Value)}
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, header{Key: h.Key, Value: collapse(h.Value)})
	}
	return out
}

// describeBytesShortMax is the longest byte string described in full.
const describeBytesShortMax = 48

func describeBytes(b []byte) string {
	if b == nil {
		return "null"
	}
	if len(b) <= describeBytesShortMax {
		return strconv.Quote(string(b))
	}
	sum := sha256.Sum256(b)
	return fmt.Sprintf("%q…(%d bytes, sha256 %x)", b[:16], len(b), sum[:8])
}
