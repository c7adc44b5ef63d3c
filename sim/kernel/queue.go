package kernel

import (
	"fmt"
	"math"
)

// eventQueue is a binary min-heap of scheduled events ordered by (at, tie,
// seq). It is written out rather than going through container/heap: the
// queue is the simulator's innermost loop (every event is pushed and popped
// once), and the interface calls and type assertions of container/heap cost
// more than the comparisons themselves.
//
// The heap holds entries by value with their keys inline, so sifting
// compares neighbouring entries in one array instead of following a pointer
// to an Event per comparison. Each event knows its index, so a stopped
// event leaves the heap at once instead of being carried until it reaches
// the front.
type eventQueue []queued

// queued is one entry of the queue: when the event is due, and its place
// among events due at the same nanosecond.
type queued struct {
	at    int64  // virtual time the event is due
	tie   uint64 // drawn from the seeded tie stream (see Kernel.ties)
	seq   uint64 // scheduling order; unique, so the order is total
	event *Event
}

// before is the queue's order: earlier time first, then the seeded tie, then
// scheduling order (seq is unique, so the order is total).
func before(a, b *queued) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.tie != b.tie {
		return a.tie < b.tie
	}
	return a.seq < b.seq
}

func (q eventQueue) Len() int { return len(q) }

// eventQueueLenMax bounds the entries of one heap, so that an event's
// index fits its int32.
const eventQueueLenMax = math.MaxInt32

// push adds an entry.
func (q *eventQueue) push(entry queued) {
	i := len(*q)
	if i >= eventQueueLenMax {
		panic(fmt.Sprintf("kernel: more than %d events pending", eventQueueLenMax))
	}
	*q = append(*q, entry)
	q.up(i)
}

// popFront removes the earliest entry and returns its event.
func (q *eventQueue) popFront() *Event {
	return q.remove(0)
}

// remove takes the entry at index i out of the heap and returns its event.
func (q *eventQueue) remove(i int) *Event {
	old := *q
	last := len(old) - 1
	if i < 0 || i > last {
		panic("kernel: event queue index out of range")
	}
	e := old[i].event
	if i != last {
		old[i] = old[last]
		old[i].event.index = int32(i)
	}
	old[last] = queued{} // drop the pointer, so the event can be collected
	*q = old[:last]
	if i != last {
		if !q.down(i) {
			q.up(i)
		}
	}
	e.index = -1
	return e
}

// up moves the entry at index i toward the root until its parent is earlier.
func (q eventQueue) up(i int) {
	entry := q[i]
	for i > 0 {
		parent := (i - 1) / 2
		if !before(&entry, &q[parent]) {
			break
		}
		q[i] = q[parent]
		q[i].event.index = int32(i)
		i = parent
	}
	q[i] = entry
	entry.event.index = int32(i)
}

// down moves the entry at index i toward the leaves until both children are
// later, and reports whether it moved.
func (q eventQueue) down(i int) bool {
	start := i
	entry := q[i]
	n := len(q)
	for {
		child := 2*i + 1
		if child >= n {
			break
		}
		if right := child + 1; right < n && before(&q[right], &q[child]) {
			child = right
		}
		if !before(&q[child], &entry) {
			break
		}
		q[i] = q[child]
		q[i].event.index = int32(i)
		i = child
	}
	q[i] = entry
	entry.event.index = int32(i)
	return i > start
}
