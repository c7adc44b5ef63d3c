package log_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"sluice/core/batch"
	"sluice/core/log"
	"sluice/sim/simdisk"
)

// lowerAnIndexEntry rewrites, durably, the offset index of the segment file
// name so that one entry names an offset one below the batch at its
// position, while the entries stay strictly increasing: the index passes
// its sanity checks and only reading the batch tells it is wrong. last
// picks the segment's last such entry, else its first but the last. It
// returns the offset the entry now names.
func lowerAnIndexEntry(t *testing.T, h *harness, name string, last bool) int64 {
	t.Helper()
	indexName := strings.Replace(name, ".log", ".index", 1)
	raw := readFile(t, h, indexName)
	chosen, previous := -1, uint32(0)
	for i := 0; i+8 <= len(raw); i += 8 {
		relative := binary.BigEndian.Uint32(raw[i:])
		if relative-previous >= 2 && (last || i+8 < len(raw)) {
			chosen = i
			if !last {
				break
			}
		}
		previous = relative
	}
	if chosen < 0 {
		t.Fatalf("%s has no entry two offsets above the one before it", indexName)
	}
	lowered := binary.BigEndian.Uint32(raw[chosen:]) - 1
	binary.BigEndian.PutUint32(raw[chosen:], lowered)
	f, err := h.disk.OpenFile(testDir+"/"+indexName, false)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteAt(raw, 0)
	f.Sync(func(error) {})
	h.drain()
	return segmentBase(t, name) + int64(lowered)
}

// closedLogWithIndexes fills a log of small segments indexed every 50
// bytes, syncs and closes it, and returns its batches and segment files.
func closedLogWithIndexes(t *testing.T) (*harness, log.Config, [][]byte, []string) {
	t.Helper()
	h := newHarness(t, 1, simdisk.Faults{})
	config := smallConfig()
	config.IndexIntervalBytes = 50
	l := h.open(config)
	stored := fill(t, l, 80, 100)
	h.syncAll(l)
	l.Close()
	names, _ := segmentFiles(t, h)
	return h, config, stored, names
}

func segmentBase(t *testing.T, name string) int64 {
	t.Helper()
	var base int64
	if _, err := fmt.Sscanf(strings.TrimSuffix(name, ".log"), "%d", &base); err != nil {
		t.Fatalf("segment name %q: %v", name, err)
	}
	return base
}

// A wrong offset index entry must never make a read serve a batch for
// offsets it does not hold: the batch at the entry's position starts above
// the entry's offset, and read on from the entry it would pass for the
// first batch after a gap compaction left (log seed 418364, where two reads
// in a row flipped the same bit of an 8-byte index). Recovery, which trusts
// a segment below the recovery point and reads on from its last entry,
// finds the last entry wrong and scans the segment instead, rebuilding its
// index; an entry before it is only met by reads, which then answer
// ErrCorrupt for the offsets it covers rather than the wrong batch.
func TestAWrongIndexEntryNeverServesAnotherBatch(t *testing.T) {
	h, config, stored, names := closedLogWithIndexes(t)
	if len(names) < 4 {
		t.Fatalf("%d segments, want at least 4", len(names))
	}
	// The middle entry first: recovery scans every segment after one
	// it cannot trust.
	middleWrong := lowerAnIndexEntry(t, h, names[1], false)
	lastWrong := lowerAnIndexEntry(t, h, names[2], true)
	h.crash()

	l := h.open(config)
	if end := batchFirstOffset(stored[len(stored)-1]) + int64(splitRead(t, stored[len(stored)-1])[0].LastOffsetDelta) + 1; l.StartOffset() != 0 || l.EndOffset() != end {
		t.Fatalf("recovered [%d, %d), want [0, %d)", l.StartOffset(), l.EndOffset(), end)
	}
	middle, after := segmentBase(t, names[1]), segmentBase(t, names[2])
	refused := 0
	for offset := l.StartOffset(); offset < l.EndOffset(); offset++ {
		got, err := l.Read(offset, l.EndOffset(), 1, true)
		if err != nil {
			expectError(t, err, log.ErrCorrupt)
			if got != nil {
				t.Fatalf("Read(%d): bytes returned with ErrCorrupt", offset)
			}
			if offset < middle || offset >= after {
				t.Fatalf("Read(%d), outside the segment with the wrong middle entry: %v", offset, err)
			}
			refused++
			continue
		}
		want := -1
		for i, b := range stored {
			first := batchFirstOffset(b)
			if first <= offset && offset <= first+int64(splitRead(t, b)[0].LastOffsetDelta) {
				want = i
			}
		}
		if len(got) < len(stored[want]) || !bytes.Equal(got[:len(stored[want])], stored[want]) {
			h, err := batch.Parse(got)
			t.Fatalf("Read(%d) served batch [%d, %d] (%v), want %s", offset, h.BaseOffset, h.LastOffset(), err, describe(stored[want]))
		}
	}
	if _, err := l.Read(middleWrong, l.EndOffset(), 1, true); err == nil {
		t.Fatalf("Read(%d), at the wrong middle entry, answered: want ErrCorrupt", middleWrong)
	}
	if refused == 0 || lastWrong < after || lastWrong >= segmentBase(t, names[3]) {
		t.Fatalf("%d reads refused; the last entry's wrong offset %d", refused, lastWrong)
	}
}
