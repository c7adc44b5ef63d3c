package log_test

import (
	"math/bits"
	"path"
	"strconv"
	"strings"
	"testing"

	"sluice/core/batch"
	"sluice/core/log"
	"sluice/sim/simdisk"
)

// TestAFlippedBaseOffsetAtAGapIsNeverServed: a batch's base offset lies
// outside its CRC. In a compacted log a batch may start past where the
// previous one ended, so a bit flipped in flight that turns its base
// offset into exactly the previous batch's end would look like the next
// batch in order, and be served at offsets it does not hold (seed 8770 of
// the log workload). Every base offset of a compacted log is confirmed by
// a second read, so the flip is re-read away and the log serves what it
// holds.
func TestAFlippedBaseOffsetAtAGapIsNeverServed(t *testing.T) {
	h := newHarness(t, 3, simdisk.Faults{})
	config := compactConfig()
	config.Compacted = true
	l := h.open(config)
	// Every other batch rewrites one key, so compaction removes all of
	// them but the last and leaves one-offset gaps between the others.
	for i := range 40 {
		key := "u" + strconv.Itoa(i)
		if i%2 == 0 {
			key = "rewritten"
		}
		mustAppend(t, l, keyedBatch(h.nowMilliseconds(), key+"=v"+strconv.Itoa(i)), 0)
	}
	h.syncAll(l)
	compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()})
	h.syncAll(l)
	want := joinAll(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	// A batch past a gap whose base offset is one bit away from the
	// previous batch's end, and where its bytes lie on the disk.
	flip := findFlippableGap(t, h.disk)
	w := h.world()
	flipping := &flipFS{FS: w.FS, name: flip.file, at: flip.position, bit: flip.bit, armed: true, flips: 1}
	w.FS = flipping
	reopened, err := log.Open(w, testDir, config)
	if err != nil {
		t.Fatal(err)
	}
	got := joinAll(t, reopened)
	if flipping.flipped == 0 {
		t.Fatal("no read covered the base offset: the test does not test what it says")
	}
	if string(got) != string(want) {
		t.Fatalf("served %d bytes unlike the %d the log holds: a flipped base offset was believed", len(got), len(want))
	}
}

// gapFlip is a bit of a stored base offset to flip on its first read.
type gapFlip struct {
	file     string
	position int64 // the byte holding the bit
	bit      uint
}

// findFlippableGap finds, in the segments on disk, a batch that starts
// past the previous batch's end by a gap such that one flipped bit of its
// base offset makes it start exactly there.
func findFlippableGap(t *testing.T, disk *simdisk.Disk) gapFlip {
	t.Helper()
	names, err := disk.ReadDir(testDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if !strings.HasSuffix(name, ".log") {
			continue
		}
		data, ok := disk.DurableFile(path.Join(testDir, name))
		if !ok {
			continue
		}
		previousEnd, err := strconv.ParseInt(strings.TrimSuffix(name, ".log"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		for s := (batch.Scanner{Buf: data}); s.Next(); {
			h := s.Header()
			position := int64(s.Position())
			if difference := uint64(h.BaseOffset ^ previousEnd); h.BaseOffset > previousEnd && bits.OnesCount64(difference) == 1 {
				bit := bits.TrailingZeros64(difference)
				return gapFlip{file: path.Join(testDir, name), position: position + 7 - int64(bit/8), bit: uint(bit % 8)}
			}
			previousEnd = h.NextOffset()
		}
	}
	t.Fatal("compaction left no gap one bit wide: the test needs one")
	return gapFlip{}
}
