package kernel

import (
	"fmt"
	"io"
)

// Trace is the record of a run: every event the kernel ran and every line
// core logged, hashed as they happen. Two runs of one seed must produce the
// same hash; that is what "deterministic" means here. When a writer is set
// the trace is also printed as text, one line per entry.
type Trace struct {
	// hash is a running FNV-1a (64-bit) over every entry. It is kept
	// inline rather than behind hash.Hash64: every event of every run
	// goes through it, and writing a string through io.Writer copies it
	// to the heap first. The values are those of hash/fnv's New64a.
	hash    uint64
	entries uint64
	out     io.Writer
}

// FNV-1a's 64-bit parameters (see hash/fnv).
const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211
)

// NewTrace returns a trace that prints to out when out is not nil.
func NewTrace(out io.Writer) *Trace {
	return &Trace{hash: fnvOffset64, out: out}
}

// hashTime mixes a virtual time into the hash as 8 little-endian bytes.
// The bytes are written out one by one rather than looped over: it runs for
// every entry, and the compiler does not unroll the loop.
func (t *Trace) hashTime(at int64) {
	u := uint64(at)
	h := t.hash
	h = (h ^ (u & 0xff)) * fnvPrime64
	h = (h ^ (u >> 8 & 0xff)) * fnvPrime64
	h = (h ^ (u >> 16 & 0xff)) * fnvPrime64
	h = (h ^ (u >> 24 & 0xff)) * fnvPrime64
	h = (h ^ (u >> 32 & 0xff)) * fnvPrime64
	h = (h ^ (u >> 40 & 0xff)) * fnvPrime64
	h = (h ^ (u >> 48 & 0xff)) * fnvPrime64
	h = (h ^ (u >> 56)) * fnvPrime64
	t.hash = h
}

// hashString mixes the bytes of s into the hash. It is left a byte at a
// time: each byte's multiplication waits for the last one's, which bounds
// it whatever the loop, and unrolled it no longer inlines.
func (t *Trace) hashString(s string) {
	h := t.hash
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	t.hash = h
}

// Event records that the kernel ran an event.
func (t *Trace) Event(at int64, owner *Process, label string) {
	t.entries++
	t.hashTime(at)
	if owner != nil {
		t.hashString(owner.name)
	}
	t.hashString(label)
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
	t.hashTime(at)
	t.hashString(source)
	t.hashString(text)
	if t.out != nil {
		fmt.Fprintf(t.out, "%s %s %s\n", formatTime(at), source, text)
	}
}

// Hash is the trace's hash so far, as 16 hex digits.
func (t *Trace) Hash() string { return fmt.Sprintf("%016x", t.hash) }

// Entries is the number of entries recorded.
func (t *Trace) Entries() uint64 { return t.entries }

// formatTime prints virtual nanoseconds as seconds with microseconds.
func formatTime(ns int64) string {
	return fmt.Sprintf("%d.%06d", ns/1e9, ns%1e9/1e3)
}
