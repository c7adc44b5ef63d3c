package batch

import (
	"errors"
	"testing"
)

func TestFramesCountsWholeBatches(t *testing.T) {
	one := Build(Spec{BaseTimestamp: 1, ProducerID: NoProducerID, Records: []Record{{Value: []byte("a")}}})
	two := append(append([]byte(nil), one...), one...)
	for _, c := range []struct {
		name  string
		b     []byte
		count int
	}{
		{"none", nil, 0},
		{"one", one, 1},
		{"two", two, 2},
		{"one and a cut second", append(append([]byte(nil), one...), one[:30]...), 1},
		{"one cut short", one[:len(one)-1], 0},
		{"a header's start only", one[:16], 0},
	} {
		count, first, err := Frames(c.b)
		if err != nil || count != c.count {
			t.Errorf("%s: %d batches, error %v; want %d", c.name, count, err, c.count)
		}
		if count > 0 && len(first) != len(one) {
			t.Errorf("%s: the first batch is %d bytes, want %d", c.name, len(first), len(one))
		}
	}
	corrupt := append([]byte(nil), one...)
	corrupt[offsetBatchLength+3] = 13 // a length below any batch's
	corrupt[offsetBatchLength], corrupt[offsetBatchLength+1], corrupt[offsetBatchLength+2] = 0, 0, 0
	if _, _, err := Frames(corrupt); !errors.Is(err, ErrLength) {
		t.Errorf("a length of 13: error %v, want ErrLength", err)
	}
	if MagicOf(one) != Magic || CompressionOf(one) != CompressionNone || CompressionOf(one[:10]) != -1 {
		t.Errorf("magic %d, compression %d", MagicOf(one), CompressionOf(one))
	}
}
