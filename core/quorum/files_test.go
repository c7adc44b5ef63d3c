package quorum

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"sluice/core/batch"
	"sluice/core/metadata"
)

func TestElectionStateRoundTrip(t *testing.T) {
	for _, s := range []electionState{
		{Epoch: 0, LeaderID: noNode, VotedFor: noNode},
		{Epoch: 7, LeaderID: 2, VotedFor: 3},
		{Epoch: 1 << 30, LeaderID: noNode, VotedFor: 5},
	} {
		got, err := decodeElectionState(s.encode())
		if err != nil || got != s {
			t.Fatalf("%+v came back as %+v, %v", s, got, err)
		}
	}
}

// The state file is the JSON json.Marshal writes, then its CRC line, as
// the file has always been: encode writes it without reflection.
func TestElectionStateEncodesAsJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := electionState{Epoch: rapid.Int32().Draw(t, "epoch"), LeaderID: rapid.Int32().Draw(t, "leader"), VotedFor: rapid.Int32().Draw(t, "vote")}
		body, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		body = append(body, '\n')
		want := fmt.Appendf(body, "crc32c %08x\n", crc32.Checksum(body, castagnoli))
		if got := s.encode(); !bytes.Equal(got, want) {
			t.Fatalf("encode wrote %q, want %q", got, want)
		}
		if got := s.encode(); len(got) > stateEncodedBytesMax {
			t.Fatalf("encode wrote %d bytes, more than stateEncodedBytesMax %d", len(got), stateEncodedBytesMax)
		}
	})
}

// A flipped bit anywhere in the file is caught (and the read repeated), so
// a corrupted read can never hand back a different vote. (A flip that
// changes nothing read, such as the case of a hex digit of the CRC, may
// pass.)
func TestElectionStateDetectsEveryFlippedBit(t *testing.T) {
	s := electionState{Epoch: 9, LeaderID: 1, VotedFor: 1}
	encoded := s.encode()
	for i := range encoded {
		for bit := 0; bit < 8; bit++ {
			damaged := append([]byte(nil), encoded...)
			damaged[i] ^= 1 << bit
			if got, err := decodeElectionState(damaged); err == nil && got != s {
				t.Fatalf("byte %d bit %d flipped, yet decoded %+v", i, bit, got)
			} else if err != nil && !errors.Is(err, errBadData) {
				t.Fatalf("byte %d bit %d: %v is not errBadData", i, bit, err)
			}
		}
	}
}

func TestSnapshotNames(t *testing.T) {
	id := snapshotID{endOffset: 120, epoch: 7}
	if name := id.fileName(); name != "00000000000000000120-0000000007.checkpoint" {
		t.Fatalf("file name %q", name)
	}
	if got, ok := parseSnapshotName(id.fileName()); !ok || got != id {
		t.Fatalf("parsed %v %v", got, ok)
	}
	for _, name := range []string{
		"log.checkpoint", "quorum-state", "00000000000000000120-0000000007.checkpoint.tmp",
		"0000000000000000012-0000000007.checkpoint", "00000000000000000120-000000007.checkpoint",
		"0000000000000000012x-0000000007.checkpoint",
	} {
		if _, ok := parseSnapshotName(name); ok {
			t.Fatalf("%q parsed as a snapshot", name)
		}
	}
}

func testRecords(n int) []metadata.Record {
	records := make([]metadata.Record, n)
	for i := range records {
		records[i] = testRecord(string(rune('a' + i%26)))
	}
	return records
}

func TestSnapshotRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, snapshotRecordsPerBatch, snapshotRecordsPerBatch + 1, 2500} {
		c := snapshotContent{id: snapshotID{endOffset: 4000, epoch: 3}, lastOffset: 3998, records: testRecords(n)}
		got, err := decodeSnapshot(encodeSnapshot(c, 1000))
		if err != nil {
			t.Fatalf("%d records: %v", n, err)
		}
		if got.id != c.id || got.lastOffset != c.lastOffset || len(got.records) != n {
			t.Fatalf("%d records: got id %v last %d, %d records", n, got.id, got.lastOffset, len(got.records))
		}
		if diff := cmp.Diff(c.records, got.records); n > 0 && diff != "" {
			t.Fatalf("%d records differ:\n%s", n, diff)
		}
	}
}

// A snapshot cut short anywhere is refused, and one damaged anywhere is
// refused or reads back the same (batch header fields outside the CRC, such
// as a batch's leader epoch, say nothing a snapshot uses): it is only ever
// used whole and intact.
func TestSnapshotRefusesTruncatedOrDamagedBytes(t *testing.T) {
	c := snapshotContent{id: snapshotID{endOffset: 10, epoch: 1}, lastOffset: 9, records: testRecords(5)}
	encoded := encodeSnapshot(c, 1000)
	for cut := 0; cut < len(encoded); cut++ {
		if _, err := decodeSnapshot(encoded[:cut]); !errors.Is(err, errBadData) {
			t.Fatalf("cut at %d of %d: %v", cut, len(encoded), err)
		}
	}
	for i := range encoded {
		damaged := append([]byte(nil), encoded...)
		damaged[i] ^= 0x10
		got, err := decodeSnapshot(damaged)
		if err == nil && (got.id != c.id || got.lastOffset != c.lastOffset || !cmp.Equal(got.records, c.records)) {
			t.Fatalf("byte %d flipped, yet decoded different content", i)
		}
	}
}

// The filler that restarts a log at a snapshot spans exactly the offsets
// asked, in batches a follower's log accepts (valid, recordless, control).
func TestFillerBatches(t *testing.T) {
	for _, span := range [][2]int64{{0, 1}, {5, 100}, {0, fillerOffsetsMax + 3}} {
		b := fillerBatches(span[0], span[1], 4)
		s := batch.Scanner{Buf: b, VerifyCRC: true}
		next := span[0]
		for s.Next() {
			h := s.Header()
			if h.BaseOffset != next || h.LeaderEpoch != 4 || !h.IsControl() || h.RecordCount != 0 {
				t.Fatalf("span %v: batch %+v", span, h)
			}
			if _, err := batch.ValidateCompacted(s.Batch()); err != nil {
				t.Fatalf("span %v: %v", span, err)
			}
			next = h.NextOffset()
		}
		if s.Err() != nil || next != span[1] {
			t.Fatalf("span %v: ends at %d, %v", span, next, s.Err())
		}
	}
}

func TestCompareLogs(t *testing.T) {
	cases := []struct {
		epochA int32
		endA   int64
		epochB int32
		endB   int64
		want   int
	}{
		{1, 10, 1, 10, 0},
		{2, 5, 1, 100, 1}, // a later last epoch wins whatever the length
		{1, 100, 2, 5, -1},
		{3, 7, 3, 8, -1},
		{3, 9, 3, 8, 1},
		{-1, 0, 0, 0, -1},
	}
	for _, c := range cases {
		if got := compareLogs(c.epochA, c.endA, c.epochB, c.endB); got != c.want {
			t.Errorf("compareLogs(%d/%d, %d/%d) = %d, want %d", c.epochA, c.endA, c.epochB, c.endB, got, c.want)
		}
	}
}
