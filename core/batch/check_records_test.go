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
	if err := CheckRecords(good, 3, true); err != nil {
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
		if err := CheckRecords(tc.section, tc.count, tc.requireKeys); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if err := CheckRecords(keyless, 2, false); err != nil {
		t.Errorf("a keyless record where keys are not required: %v", err)
	}
}
