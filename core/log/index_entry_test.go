package log_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
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
// index; an entry before it is only met by reads, which forget it and read
// on from the entry before, so every offset is still served its batch.
func TestAWrongIndexEntryNeverServesAnotherBatch(t *testing.T) {
	for _, lookup := range []string{"by offset", "by timestamp"} {
		t.Run(lookup, func(t *testing.T) {
			h, config, stored, names := closedLogWithIndexes(t)
			if len(names) < 4 {
				t.Fatalf("%d segments, want at least 4", len(names))
			}
			// The middle entry first: recovery scans every segment
			// after one it cannot trust.
			middleWrong := lowerAnIndexEntry(t, h, names[1], false)
			lastWrong := lowerAnIndexEntry(t, h, names[2], true)
			if lastWrong < segmentBase(t, names[2]) || lastWrong >= segmentBase(t, names[3]) {
				t.Fatalf("the last entry's wrong offset %d is outside segment %s", lastWrong, names[2])
			}
			h.crash()

			l := h.open(config)
			if end := batchFirstOffset(stored[len(stored)-1]) + int64(splitRead(t, stored[len(stored)-1])[0].LastOffsetDelta) + 1; l.StartOffset() != 0 || l.EndOffset() != end {
				t.Fatalf("recovered [%d, %d), want [0, %d)", l.StartOffset(), l.EndOffset(), end)
			}
			if lookup == "by timestamp" {
				// Each batch's own timestamp: the time index sends
				// some of these lookups to the wrong entry.
				for i := range stored {
					answer, found, err := l.OffsetForTimestamp(int64(1000 + i))
					if err != nil || !found || answer.Offset != batchFirstOffset(stored[i]) {
						t.Fatalf("OffsetForTimestamp(%d) = %+v, %v, %v; want offset %d", 1000+i, answer, found, err, batchFirstOffset(stored[i]))
					}
				}
			}
			offsets := []int64{middleWrong} // the first read meets the wrong entry
			for offset := l.StartOffset(); offset < l.EndOffset(); offset++ {
				offsets = append(offsets, offset)
			}
			for _, offset := range offsets {
				got, err := l.Read(offset, l.EndOffset(), 1, true)
				if err != nil {
					t.Fatalf("Read(%d): %v", offset, err)
				}
				want := stored[batchAt(t, stored, offset)]
				if len(got) < len(want) || !bytes.Equal(got[:len(want)], want) {
					h, err := batch.Parse(got)
					t.Fatalf("Read(%d) served batch [%d, %d] (%v), want %s", offset, h.BaseOffset, h.LastOffset(), err, describe(want))
				}
			}
		})
	}
}

// Compaction's walk through a segment resumes at the batch that failed:
// when that is the batch at a wrong entry, which the reader forgets, it
// must start again from the entry before, or the batch there would pass
// for the first after a gap and the batches between be missed.
func TestCompactionsWalkPastAWrongIndexEntryMissesNoBatch(t *testing.T) {
	h, config, stored, names := closedLogWithIndexes(t)
	wrong := lowerAnIndexEntry(t, h, names[1], false)
	h.crash()
	l := h.open(config)
	var want []int64
	for _, b := range stored {
		first := batchFirstOffset(b)
		if last := first + int64(splitRead(t, b)[0].LastOffsetDelta); last >= wrong && first < segmentBase(t, names[2]) {
			want = append(want, first)
		}
	}
	got, err := log.WalkedFrom(l, wrong)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("the walk from %d visited batches %v (%v), want %v", wrong, got, err, want)
	}
}

// batchAt is the index in stored of the batch holding offset.
func batchAt(t *testing.T, stored [][]byte, offset int64) int {
	t.Helper()
	for i, b := range stored {
		if first := batchFirstOffset(b); first <= offset && offset <= first+int64(splitRead(t, b)[0].LastOffsetDelta) {
			return i
		}
	}
	t.Fatalf("no batch holds offset %d", offset)
	return -1
}
