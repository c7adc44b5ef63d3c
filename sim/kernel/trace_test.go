package kernel

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"testing"
)

// TestTraceHashIsFNV1a checks the trace's inline hash against hash/fnv's
// New64a over the same bytes: each entry's time as 8 little-endian bytes,
// then the owner's name (events with one) or the source (notes), then the
// label or text. Trace hashes printed by older runs stay comparable only if
// this holds.
func TestTraceHashIsFNV1a(t *testing.T) {
	trace := NewTrace(nil)
	model := fnv.New64a()
	owner := NewProcess("n2")
	times := []int64{0, 1, 255, 256, 1<<40 + 12345, -1, 1<<63 - 1}
	for i, at := range times {
		model.Write(binary.LittleEndian.AppendUint64(nil, uint64(at)))
		if i%2 == 0 {
			trace.Event(at, owner, "net.deliver")
			model.Write([]byte("n2"))
			model.Write([]byte("net.deliver"))
		} else {
			trace.Note(at, "net", "cut n1->n3")
			model.Write([]byte("net"))
			model.Write([]byte("cut n1->n3"))
		}
	}
	trace.Event(7, nil, "workload.think") // no owner: nothing for it
	model.Write(binary.LittleEndian.AppendUint64(nil, 7))
	model.Write([]byte("workload.think"))
	// Labels of every length up to two of hashString's four-byte turns
	// and more, so that each remainder is hashed.
	const labels = "abcdefghij"
	for n := range len(labels) + 1 {
		trace.Event(8, nil, labels[:n])
		model.Write(binary.LittleEndian.AppendUint64(nil, 8))
		model.Write([]byte(labels[:n]))
	}
	if got, want := trace.Hash(), fmt.Sprintf("%016x", model.Sum64()); got != want {
		t.Fatalf("trace hash %s, FNV-1a of the same bytes %s", got, want)
	}
	if want := uint64(len(times) + 1 + len(labels) + 1); trace.Entries() != want {
		t.Fatalf("%d entries, want %d", trace.Entries(), want)
	}
}
