package batch

import (
	"errors"
	"testing"
)

func TestCheckRecordsPassesWhatProducersWriteAndNothingElse(t *testing.T) {
	build := func(records ...Record) []byte {
		return Build(Spec{ProducerID: NoProducerID, Records: records})[HeaderSize:]
	}
	headers := []RecordHeader{{Key: "h", Value: []byte("v")}, {Key: "null", Value: nil}}
	good := build(Record{Key: []byte("k"), Value: []byte("1"), Headers: headers}, Record{Key: []byte{}, Value: nil}, Record{Key: []byte("k"), Value: []byte("3")})
	if _, err := CheckRecords(good, 3, true, 0); err != nil {
		t.Fatalf("records a producer writes: %v", err)
	}
	one := build(Record{Key: []byte("k"), Value: []byte("1")})
	keyless := build(Record{Key: []byte("k")}, Record{Value: []byte("no key")})
	for _, tc := range []struct {
		name        string
		section     []byte
		count       int32
		requireKeys bool
		want        error
	}{
		{"a record fewer than counted", good, 4, false, errRecord},
		{"a record more than counted", good, 2, false, errRecord},
		{"a byte after the last record", append(append([]byte(nil), good...), 0), 3, false, errRecord},
		{"the last record cut short", good[:len(good)-1], 3, false, errRecord},
		{"two records at offset delta 0", append(append([]byte(nil), one...), one...), 2, false, ErrRecordOffsets},
		{"a keyless record where keys are required", keyless, 2, true, ErrKeyless},
		{"a negative count", good, -1, false, errRecord},
	} {
		if _, err := CheckRecords(tc.section, tc.count, tc.requireKeys, 0); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := CheckRecords(keyless, 2, false, 0); err != nil {
		t.Errorf("a keyless record where keys are not required: %v", err)
	}
}

// CheckRecords returns the range of the records' timestamps, leaving out
// records without one (NoTimestamp), as Kafka's validation skips them.
func TestCheckRecordsReturnsTheRecordTimestamps(t *testing.T) {
	section := Build(Spec{BaseTimestamp: 1000, ProducerID: NoProducerID, Records: []Record{
		{Value: []byte("a"), TimestampDelta: 7}, {Value: []byte("b")}, {Value: []byte("c"), TimestampDelta: -1001}, {Value: []byte("d"), TimestampDelta: 3},
	}})[HeaderSize:]
	got, err := CheckRecords(section, 4, false, 1000)
	if err != nil || got != (RecordTimestamps{Min: 1000, Max: 1007}) {
		t.Fatalf("CheckRecords = %+v, %v; want min 1000, max 1007 (the record at -1 has none)", got, err)
	}
	none := Build(Spec{BaseTimestamp: NoTimestamp, ProducerID: NoProducerID, Records: []Record{{Value: []byte("a")}}})[HeaderSize:]
	if got, err := CheckRecords(none, 1, false, NoTimestamp); err != nil || got != (RecordTimestamps{Min: NoTimestamp, Max: NoTimestamp}) {
		t.Fatalf("no timestamps: %+v, %v", got, err)
	}
}
