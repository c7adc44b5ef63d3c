package checker

import (
	"fmt"
	"hash/fnv"
)

// logState is one immutable version of a partition's log, the state of the
// porcupine log model. Porcupine keeps every state it visits, so appending
// must not copy the log: a version is its last value plus a pointer to the
// version before it, and versions share their common prefix.
//
// Reads need the value at an arbitrary offset. Walking back one version at
// a time would cost the log's length per read, so every version also keeps
// a jump pointer to an older version, chosen so that reaching any
// ancestor takes O(log n) steps (skew-binary jump pointers, Myers 1983).
type logState struct {
	// length is the number of values; the last one, value, is at offset
	// length-1. The empty log has length 0 and no value.
	length int64
	value  string
	// unobserved marks a value nobody observed, appended to fill a gap
	// in the offsets (see logModel); its value is not known, so no read
	// may match it.
	unobserved bool
	previous   *logState
	jump       *logState
	// hash sums up every value in order, so unequal logs rarely need a
	// walk to tell apart.
	hash uint64
}

// emptyLog is the log before any append. It is its own jump target.
func emptyLog() *logState {
	empty := &logState{}
	empty.jump = empty
	return empty
}

// append returns the log with value added at offset length.
func (l *logState) append(value string) *logState {
	return l.extend(&logState{value: value, hash: extendHash(l.hash, value)})
}

// appendUnobserved returns the log with an unobserved value added at
// offset length.
func (l *logState) appendUnobserved() *logState {
	return l.extend(&logState{unobserved: true, hash: extendHash(l.hash, unobservedHashMarker)})
}

// unobservedHashMarker stands in for an unobserved value in the hash. A
// value spelled the same would only collide in the hash, which equal then
// resolves.
const unobservedHashMarker = "\x00unobserved"

func (l *logState) extend(next *logState) *logState {
	next.length = l.length + 1
	next.previous = l
	// If l's jump and its jump's jump span equal distances, the new version
	// may skip both at once; otherwise it jumps to l. This keeps jump
	// distances in a skew-binary pattern.
	if l.jump.length-l.jump.jump.length == l.length-l.jump.length && l.length > 0 {
		next.jump = l.jump.jump
	} else {
		next.jump = l
	}
	return next
}

// ancestor returns the version of length length, which must be at most
// l's: the version whose last value is at offset length-1.
func (l *logState) ancestor(length int64) *logState {
	if length > l.length || length < 0 {
		panic(fmt.Sprintf("checker: ancestor of length %d asked of a log of length %d", length, l.length))
	}
	version := l
	for version.length > length {
		if version.jump.length >= length {
			version = version.jump
		} else {
			version = version.previous
		}
	}
	return version
}

// equal compares two versions value by value, stopping where they share
// history.
func (l *logState) equal(other *logState) bool {
	if l.length != other.length || l.hash != other.hash {
		return false
	}
	for x, y := l, other; x != y; x, y = x.previous, y.previous {
		if x.value != y.value || x.unobserved != y.unobserved {
			return false
		}
	}
	return true
}

func extendHash(hash uint64, value string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(value))
	return hash*1099511628211 ^ h.Sum64()
}
