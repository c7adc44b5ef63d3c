package batch

import (
	"fmt"
	"testing"
)

// The leader now reads every record of a produced batch before storing it
// (CheckRecords). Its cost is measured against the CRC the leader already
// computes over the same bytes: compare the two lines' ns/op.
//
//	go test -run XXX -bench 'CheckRecords|BatchCRC' ./core/batch
func benchmarkBatch() ([]byte, Header) {
	records := make([]Record, 160) // 16 KiB of 100-byte values, linger-sized
	for i := range records {
		records[i] = Record{Key: fmt.Appendf(nil, "key-%d", i), Value: make([]byte, 100)}
	}
	b := Build(Spec{ProducerID: NoProducerID, Records: records})
	h, err := Parse(b)
	if err != nil {
		panic(err)
	}
	return b, h
}

func BenchmarkCheckRecords(b *testing.B) {
	data, h := benchmarkBatch()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := CheckRecords(data[HeaderSize:], h.RecordCount, true, h.BaseTimestamp); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBatchCRC(b *testing.B) {
	data, h := benchmarkBatch()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if ComputeCRC(data) != h.CRC {
			b.Fatal("CRC")
		}
	}
}
