package kernel

// eventQueue is a binary min-heap of events ordered by (at, tie, seq). It
// is written out for *event rather than going through container/heap: the
// queue is the simulator's innermost loop (every event is pushed and popped
// once), and the interface calls and type assertions of container/heap cost
// more than the comparisons themselves. Each event knows its index, so a
// cancelled event leaves the heap at once instead of being carried until it
// reaches the front.
type eventQueue []*event

// before is the queue's order: earlier time first, then the seeded tie, then
// scheduling order (seq is unique, so the order is total).
func before(a, b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.tie != b.tie {
		return a.tie < b.tie
	}
	return a.seq < b.seq
}

func (q eventQueue) Len() int { return len(q) }

// push adds e.
func (q *eventQueue) push(e *event) {
	e.index = len(*q)
	*q = append(*q, e)
	q.up(e.index)
}

// popFront removes and returns the earliest event.
func (q *eventQueue) popFront() *event {
	return q.remove(0)
}

// remove takes the event at index i out of the heap.
func (q *eventQueue) remove(i int) *event {
	old := *q
	last := len(old) - 1
	if i < 0 || i > last {
		panic("kernel: event queue index out of range")
	}
	e := old[i]
	if i != last {
		old[i] = old[last]
		old[i].index = i
	}
	old[last] = nil
	*q = old[:last]
	if i != last {
		if !q.down(i) {
			q.up(i)
		}
	}
	e.index = -1
	return e
}

// up moves the event at index i toward the root until its parent is earlier.
func (q eventQueue) up(i int) {
	e := q[i]
	for i > 0 {
		parent := (i - 1) / 2
		if !before(e, q[parent]) {
			break
		}
		q[i] = q[parent]
		q[i].index = i
		i = parent
	}
	q[i] = e
	e.index = i
}

// down moves the event at index i toward the leaves until both children are
// later, and reports whether it moved.
func (q eventQueue) down(i int) bool {
	start := i
	e := q[i]
	n := len(q)
	for {
		child := 2*i + 1
		if child >= n {
			break
		}
		if right := child + 1; right < n && before(q[right], q[child]) {
			child = right
		}
		if !before(q[child], e) {
			break
		}
		q[i] = q[child]
		q[i].index = i
		i = child
	}
	q[i] = e
	e.index = i
	return i > start
}
