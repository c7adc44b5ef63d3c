package kernel

import (
	"encoding/binary"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
)

// Trace is the record of a run: every event the kernel ran and every line
// core logged, hashed as they happen. Two runs of one seed must produce the
// same hash; that is what "deterministic" means here. When a writer is set
// the trace is also printed as text, one line per entry.
type Trace struct {
	hash    hash.Hash64
	entries uint64
	out     io.Writer
	scratch [8]byte
}

// NewTrace returns a trace that prints to out when out is not nil.
func NewTrace(out io.Writer) *Trace {
	return &Trace{hash: fnv.New64a(), out: out}
}

// Event records that the kernel ran an event.
func (t *Trace) Event(at int64, owner *Process, label string) {
	t.entries++
	binary.LittleEndian.PutUint64(t.scratch[:], uint64(at))
	t.hash.Write(t.scratch[:])
	if owner != nil {
		io.WriteString(t.hash, owner.name)
	}
	io.WriteString(t.hash, label)
	if t.out != nil {
		name := "-"
		if owner != nil {
			name = owner.name
		}
		fmt.Fprintf(t.out, "%s %s %s\n", formatTime(at), name, label)
	}
}

// Note records a line of text: something core logged, or the workload's
// own account of what it did.
func (t *Trace) Note(at int64, source, text string) {
	t.entries++
	binary.LittleEndian.PutUint64(t.scratch[:], uint64(at))
	t.hash.Write(t.scratch[:])
	io.WriteString(t.hash, source)
	io.WriteString(t.hash, text)
	if t.out != nil {
		fmt.Fprintf(t.out, "%s %s %s\n", formatTime(at), source, text)
	}
}

// Hash is the trace's hash so far, as 16 hex digits.
func (t *Trace) Hash() string { return fmt.Sprintf("%016x", t.hash.Sum64()) }

// Entries is the number of entries recorded.
func (t *Trace) Entries() uint64 { return t.entries }

// formatTime prints virtual nanoseconds as seconds with microseconds.
func formatTime(ns int64) string {
	return fmt.Sprintf("%d.%06d", ns/1e9, ns%1e9/1e3)
}
