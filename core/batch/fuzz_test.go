package batch

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// FuzzValidate feeds arbitrary bytes to what a produced batch must pass
// before it is stored (Validate), to what reads records out of a stored
// batch (Records), to the leader's look at each record (CheckRecords) and
// to the scanner that walks segment bytes. None may
// panic; a batch Validate accepts must be whole and self-consistent, and
// the scanner must agree with Validate on it. The seed corpus runs in
// every `go test`; `make fuzz` explores further.
func FuzzValidate(f *testing.F) {
	valid := Build(Spec{
		BaseOffset: 0, LeaderEpoch: 3, BaseTimestamp: 1_700_000_000_000, ProducerID: NoProducerID,
		Records: []Record{{Key: []byte("k"), Value: []byte("v")}, {Value: []byte("second")}},
	})
	f.Add(valid)
	f.Add(valid[:len(valid)-1]) // torn
	flipped := bytes.Clone(valid)
	flipped[len(flipped)-1] ^= 0xff // bad CRC
	f.Add(flipped)
	magic1 := bytes.Clone(valid)
	magic1[offsetMagic] = 1
	f.Add(magic1)
	f.Add([]byte{})
	f.Add(make([]byte, HeaderSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := Validate(b)
		s := Scanner{Buf: b, VerifyCRC: true}
		scanned := s.Next()
		if err != nil {
			if scanned && len(s.Batch()) == len(b) && h.Magic == Magic && h.RecordCount > 0 &&
				h.LastOffsetDelta == h.RecordCount-1 && h.Compression() <= CompressionZstd {
				t.Fatalf("Validate refused (%v) a batch the scanner took whole", err)
			}
			return
		}
		if h.Size() != len(b) || !CheckCRC(b) || h.Magic != Magic {
			t.Fatalf("Validate accepted an inconsistent batch: %+v over %d bytes", h, len(b))
		}
		if int(binary.BigEndian.Uint32(b[offsetCRC:])) != int(h.CRC) {
			t.Fatalf("header CRC %d differs from the bytes'", h.CRC)
		}
		if !scanned || len(s.Batch()) != len(b) || s.Next() {
			t.Fatalf("the scanner does not see exactly the one batch Validate accepted (err %v)", s.Err())
		}
		if h.Compression() == CompressionNone {
			// Records may refuse a malformed records section, but never
			// panic, and never return more records than the header counts.
			records, err := Records(b)
			if err == nil && len(records) > int(h.RecordCount) {
				t.Fatalf("%d records decoded, header counts %d", len(records), h.RecordCount)
			}
			// What the leader checks before storing (CheckRecords) must
			// pass only records that decode, exactly as many as counted,
			// numbered 0, 1, 2...: then every consumer reads them.
			_, checked := CheckRecords(b[HeaderSize:], h.RecordCount, true, h.BaseTimestamp)
			if checked == nil {
				if err != nil || len(records) != int(h.RecordCount) {
					t.Fatalf("CheckRecords passed records that decode to %d of %d (%v)", len(records), h.RecordCount, err)
				}
				for i, r := range records {
					if r.OffsetDelta != int32(i) || r.Key == nil {
						t.Fatalf("CheckRecords passed record %d with offset delta %d, key %q", i, r.OffsetDelta, r.Key)
					}
				}
			}
		}
	})
}
