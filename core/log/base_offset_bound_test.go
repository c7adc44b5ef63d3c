package log_test

import (
	"bytes"
	"errors"
	"testing"

	"sluice/core/log"
	"sluice/sim/simdisk"
)

// A base offset lies outside its batch's CRC, and a batch may start past
// where the one before it ended (a gap compaction left, here or on the
// leader a follower copies), so a base offset read too high is believed
// once re-reads of it agree. Agreement is likely, not certain: the same
// bit can flip in flight twice. In log seed 3823448 bit 34 of the base
// offset of the batch at 307 flipped on the read of its chunk and on two
// of the three re-reads that followed; the batch passed for one at
// 2^34+307, after a gap, and Read, taking it for the first batch at or
// after 307, stopped there as at its maxOffset and served nothing for an
// offset the log holds. No batch of a segment reaches past the segment's
// end, so such a base offset is refused whatever the re-reads say, and
// read again.

// flippedBatch is the third of four batches of five records: offsets
// [10, 14].
const flippedBatch = 2

// flippedBit is the bit of the base offset that flips: bit 34, as in the
// seed, far past any offset of the segment.
const flippedBit = 34

// logWithFourBatches writes four batches to a log, syncs and closes it,
// and returns the batches as stored and where the flipped one starts.
func logWithFourBatches(t *testing.T, h *harness, config log.Config) (stored [][]byte, position int64) {
	t.Helper()
	l := h.open(config)
	for i := range 4 {
		b := makeBatch(5, 20, h.nowMilliseconds())
		mustAppend(t, l, b, 0) // stamps b in place
		if i == flippedBatch {
			position = int64(len(bytes.Join(stored, nil)))
		}
		stored = append(stored, b)
	}
	h.syncAll(l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return stored, position
}

func TestAReadNeverServesABaseOffsetPastItsSegment(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flips int // reads covering the bit that flip it; -1: every one
	}{
		// The seed's case: the chunk's read and two re-reads flip it,
		// enough for the re-reads to confirm it as a gap; later reads
		// are clean, and the read must serve the batch.
		{name: "flipped-on-three-reads", flips: 3},
		// A bit that flips on every read (or is wrong on the media):
		// the read must fail with ErrCorrupt, not answer nothing.
		{name: "flipped-on-every-read", flips: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 1, simdisk.Faults{})
			config := log.DefaultConfig()
			stored, position := logWithFourBatches(t, h, config)
			w := h.world()
			flipping := &flipFS{FS: w.FS, name: testDir + "/00000000000000000000.log",
				at: position + 7 - flippedBit/8, bit: flippedBit % 8, flips: tc.flips}
			w.FS = flipping
			l, err := log.Open(w, testDir, config)
			if err != nil {
				t.Fatal(err)
			}
			if l.EndOffset() != 20 {
				t.Fatalf("the log reopened ending at %d, want 20", l.EndOffset())
			}
			flipping.armed = true // recovery reads it clean; Read does not

			got, err := l.Read(10, l.EndOffset(), 1, true)
			if flipping.flipped < 3 {
				t.Fatalf("the bit flipped on %d reads, fewer than the chunk's and two re-reads: the test does not test what it says", flipping.flipped)
			}
			if tc.flips < 0 {
				if !errors.Is(err, log.ErrCorrupt) || len(got) != 0 {
					t.Fatalf("Read(10) of a batch whose base offset always reads as 2^34+10 returned %d bytes and %v, want ErrCorrupt", len(got), err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Read(10): %v", err)
			}
			if !bytes.Equal(got, stored[flippedBatch]) {
				t.Fatalf("Read(10) returned %d bytes %s, want the batch holding 10, %s", len(got), describe(got), describe(stored[flippedBatch]))
			}
		})
	}
}

// Recovery reads the same way, and confirms a scanned batch's leader
// epoch with a read of its header that must name the same base offset too.
// A base offset flipped past the segment on the scan's read and on the
// three re-reads those confirmations make must not be recorded: the segment would
// then end at 2^34+15, and the batches after it, read clean, would no
// longer follow it and be cut. One flipped on every read is bad data:
// recovery cuts the log before it.
func TestRecoveryNeverTakesABaseOffsetPastItsSegment(t *testing.T) {
	for _, tc := range []struct {
		name    string
		flips   int   // reads covering the bit that flip it; -1: every one
		wantEnd int64 // where the recovered log ends
	}{
		{name: "flipped-on-four-reads", flips: 4, wantEnd: 20},
		{name: "flipped-on-every-read", flips: -1, wantEnd: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, 1, simdisk.Faults{})
			config := log.DefaultConfig()
			stored, position := logWithFourBatches(t, h, config)
			w := h.world()
			flipping := &flipFS{FS: w.FS, name: testDir + "/00000000000000000000.log",
				at: position + 7 - flippedBit/8, bit: flippedBit % 8, flips: tc.flips, armed: true}
			w.FS = flipping
			l, err := log.Open(w, testDir, config)
			if err != nil {
				t.Fatal(err)
			}
			if flipping.flipped < 4 {
				t.Fatalf("the bit flipped on %d reads, fewer than the scan's and three re-reads: the test does not test what it says", flipping.flipped)
			}
			if l.StartOffset() != 0 || l.EndOffset() != tc.wantEnd {
				t.Fatalf("recovered [%d, %d), want [0, %d)", l.StartOffset(), l.EndOffset(), tc.wantEnd)
			}
			flipping.armed = false
			got := readAll(t, l)
			want := stored[:tc.wantEnd/5]
			if len(got) != len(want) {
				t.Fatalf("recovered %d batches, want %d", len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("batch %d recovered as %s, want %s", i, describe(got[i]), describe(want[i]))
				}
			}
		})
	}
}
