package log_test

import (
	"fmt"
	"strings"
	"testing"

	"sluice/core/batch"
	"sluice/core/log"
	"sluice/sim/simdisk"
)

// Below a log start not yet durable the epoch cache has forgotten the
// epochs, yet a crash brings those batches back, so compaction copies them:
// a leader epoch flipped in flight there (no CRC covers it) must not be
// copied. Log seed 1130340: compaction copied batch 88's epoch 0 as
// 33554432, and after the crash reads met it.
func TestCompactionNeverCopiesAnEpochFlippedBelowTheStart(t *testing.T) {
	h := newHarness(t, 1, simdisk.Faults{})
	flips := &flipFS{name: testDir + "/00000000000000000000.log", flips: 1}
	w := h.world()
	flips.FS = w.FS
	w.FS = flips
	l, err := log.Open(w, testDir, compactConfig())
	if err != nil {
		t.Fatal(err)
	}
	first := keyedBatch(h.nowMilliseconds(), "k0=a")
	mustAppend(t, l, first, 0)
	victim := mustAppend(t, l, keyedBatch(h.nowMilliseconds(), "k1=a"), 0)
	mustAppend(t, l, keyedBatch(h.nowMilliseconds(), "k0=b"), 0)
	// Above the start, where the pass maps keys: k0's first two records go.
	mustAppend(t, l, keyedBatch(h.nowMilliseconds(), "k0=c"), 1)
	for i := range 40 {
		mustAppend(t, l, keyedBatch(h.nowMilliseconds(), fmt.Sprintf("fill%d=%s", i, strings.Repeat("f", 40))), 1)
	}
	h.syncAll(l)
	if err := l.AdvanceStartOffset(victim.LastOffset + 2); err != nil {
		t.Fatal(err)
	}
	// The epoch's second byte, bit 1: epoch 0 read as 33554432.
	flips.at, flips.bit, flips.armed = int64(len(first))+batch.LengthPrefixSize, 1, true
	result := compactAll(t, h, l, log.CompactOptions{UpTo: l.EndOffset()})
	if flips.flipped == 0 || result.SegmentsRewritten == 0 {
		t.Fatalf("reads flipped %d, result %+v: the test tests nothing", flips.flipped, result)
	}

	// The segment compaction wrote, read straight from the disk.
	data := readFile(t, h, "00000000000000000000.log")
	found := false
	for position := 0; position < len(data); {
		header, err := batch.Parse(data[position:])
		if err != nil {
			t.Fatalf("compacted segment at %d: %v", position, err)
		}
		if header.BaseOffset == victim.FirstOffset {
			found = true
			if header.LeaderEpoch != 0 {
				t.Fatalf("compaction copied batch %d with epoch %d, want 0", header.BaseOffset, header.LeaderEpoch)
			}
		}
		position += header.Size()
	}
	if !found {
		t.Fatalf("batch %d is not in the compacted segment", victim.FirstOffset)
	}
}

func readFile(t *testing.T, h *harness, name string) []byte {
	t.Helper()
	f, err := h.disk.OpenFile(testDir+"/"+name, false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size, _ := f.Size()
	data := make([]byte, size)
	if n, _ := f.ReadAt(data, 0); int64(n) != size {
		t.Fatalf("%s: short read", name)
	}
	return data
}
