package kernel

// eventQueue is a binary min-heap of scheduled events ordered by (at, tie,
// seq). It is written out rather than going through container/heap: the
// queue is the simulator's innermost loop (every event is pushed and popped
// once), and the interface calls and type assertions of container/heap cost
// more than the comparisons themselves.
//
// The heap holds entries by value with their keys inline, so sifting
// compares neighbouring entries in one array instead of following a pointer
// to an Event per comparison, and moves entries without writing to their
// events.
//
// A stopped event is not taken out at once: it stays, marked cancelled,
// until it reaches the front or until stopped events make up half the heap,
// when compact drops them all in one pass. Most timers are stopped (a reply
// came first), and taking each out of the middle of the heap cost a sift,
// and every sift a write to each moved entry's event to keep its index.
// Since the order is total, entries that never run change no order.
//
// Invariant: stopped is the number of entries whose event is cancelled.
type eventQueue struct {
	entries []queued
	stopped int
}

// queued is one entry of the queue: when the event is due, and its place
// among events due at the same nanosecond.
type queued struct {
	at    int64  // virtual time the event is due
	tie   uint64 // drawn from the seeded tie stream (see Kernel.ties)
	seq   uint64 // scheduling order; unique, so the order is total
	event *Event
}

// compactEntriesMin is the smallest heap compact bothers with: below it,
// stopped entries are left for the front to drop.
const compactEntriesMin = 64

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

// Len is the number of entries, stopped ones included.
func (q *eventQueue) Len() int { return len(q.entries) }

// push adds an entry.
func (q *eventQueue) push(entry queued) {
	entry.event.queued = true
	q.entries = append(q.entries, entry)
	q.up(len(q.entries) - 1)
}

// front is the earliest entry; the queue must not be empty.
func (q *eventQueue) front() *queued { return &q.entries[0] }

// popFront removes the earliest entry and returns its event.
func (q *eventQueue) popFront() *Event {
	entries := q.entries
	last := len(entries) - 1
	e := entries[0].event
	moved := entries[last]
	entries[last] = queued{} // drop the pointer, so the event can be collected
	q.entries = entries[:last]
	if last > 0 {
		q.place(0, moved)
	}
	e.queued = false
	if e.cancelled {
		q.stopped--
	}
	return e
}

// stop counts an entry whose event was just cancelled, and compacts the
// heap once such entries make up half of it.
func (q *eventQueue) stop(k *Kernel) {
	q.stopped++
	if len(q.entries) >= compactEntriesMin && 2*q.stopped >= len(q.entries) {
		q.compact(k)
	}
}

// compact drops every stopped entry, releasing its event to k, and restores
// the heap order over the rest (Floyd's heap construction, linear in the
// entries).
func (q *eventQueue) compact(k *Kernel) {
	kept := q.entries[:0]
	for _, entry := range q.entries {
		if entry.event.cancelled {
			entry.event.queued = false
			k.release(entry.event)
			continue
		}
		kept = append(kept, entry)
	}
	clear(q.entries[len(kept):])
	q.entries = kept
	q.stopped = 0
	for i := len(kept)/2 - 1; i >= 0; i-- {
		q.down(i)
	}
}

// up moves the entry at index i toward the root until its parent is earlier.
func (q *eventQueue) up(i int) {
	entries := q.entries
	if i == 0 || !before(&entries[i], &entries[(i-1)/2]) {
		return // in place already, as a timer set later than the others is
	}
	entry := entries[i]
	for i > 0 {
		parent := (i - 1) / 2
		if !before(&entry, &entries[parent]) {
			break
		}
		entries[i] = entries[parent]
		i = parent
	}
	entries[i] = entry
}

// down moves the entry at index i toward the leaves until both children are
// later.
func (q *eventQueue) down(i int) {
	q.place(i, q.entries[i])
}

// place puts entry in the heap at index i, whose own entry may be taken
// (popFront's hole at the root), or further down: where both children are
// later.
func (q *eventQueue) place(i int, entry queued) {
	entries := q.entries
	n := len(entries)
	for {
		child := 2*i + 1
		if child >= n {
			break
		}
		if right := child + 1; right < n && before(&entries[right], &entries[child]) {
			child = right
		}
		if !before(&entries[child], &entry) {
			break
		}
		entries[i] = entries[child]
		i = child
	}
	entries[i] = entry
}
