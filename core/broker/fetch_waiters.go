package broker

import (
	"slices"
	"time"
)

// fetchWaitersMax bounds the fetches long-polling at once; beyond it a
// fetch is answered at once with what it has.
const fetchWaitersMax = 10_000

// fetchWaiters holds fetches waiting for data (Kafka's fetch purgatory),
// indexed by the partitions they read, so a moving high watermark wakes
// exactly the fetches that care.
//
// A partition's list stays in the index when its last fetch leaves, empty,
// so that the next fetch to wait there (nearly every fetch of a partition
// waits) reuses its array rather than allocating one. The entry goes when
// the partition moves away or is removed (wake), so the index holds at
// most the partitions this broker leads.
type fetchWaiters struct {
	broker      *Broker
	byPartition map[partitionKey]*waitList
	count       int
}

// waitList is the fetches waiting on one partition, oldest first. A
// waiting fetch keeps the lists it is in (pendingFetch.waitingOn), so
// that leaving them takes no lookup.
type waitList struct {
	fetches []*pendingFetch
}

func newFetchWaiters(b *Broker) *fetchWaiters {
	return &fetchWaiters{broker: b, byPartition: map[partitionKey]*waitList{}}
}

// add parks a fetch for at most wait. It reports false when full.
func (w *fetchWaiters) add(f *pendingFetch, wait time.Duration) bool {
	if w.count >= fetchWaitersMax {
		return false
	}
	w.count++
	for key := range f.partitions() {
		list := w.byPartition[key]
		if list == nil {
			list = &waitList{}
			w.byPartition[key] = list
		}
		list.fetches = append(list.fetches, f)
		f.waitingOn = append(f.waitingOn, list)
	}
	if f.expire == nil {
		f.expire = func() { w.expire(f) }
	}
	f.timer = w.broker.w.Clock.AfterFunc(wait, f.expire)
	return true
}

// expire answers a fetch whose wait is over with what it can read now.
func (w *fetchWaiters) expire(f *pendingFetch) {
	w.remove(f)
	if !f.exchange.gone() {
		f.read()
	}
	f.answer()
}

// remove unparks a fetch. (A partition's list leaves the index only once
// empty, so the lists a fetch is in are the index's.)
func (w *fetchWaiters) remove(f *pendingFetch) {
	removed := false
	for _, list := range f.waitingOn {
		fetches := list.fetches
		for i, other := range fetches {
			if other == f {
				copy(fetches[i:], fetches[i+1:])
				fetches[len(fetches)-1] = nil // the array stays: let go of f
				list.fetches = fetches[:len(fetches)-1]
				removed = true
				break
			}
		}
	}
	clear(f.waitingOn)
	f.waitingOn = f.waitingOn[:0]
	if removed {
		w.count--
	}
}

// wakeReason says which of a partition's waiting fetches a change
// concerns.
type wakeReason int

const (
	// wakeMoved: the partition went away or changed roles; every fetch
	// waiting on it must hear.
	wakeMoved wakeReason = iota
	// wakeAppended: the leader appended; followers have bytes to copy.
	wakeAppended
	// wakeCommitted: the high watermark moved; consumers may read more.
	// A follower's fetch waits on: as in Kafka, a follower learns the
	// high watermark from its next answer (the next append, or MaxWait),
	// and answering it for the watermark alone would double the fetches
	// of every produce.
	wakeCommitted
)

// concerns reports whether a waiting fetch must be re-read for the change.
func (r wakeReason) concerns(f *pendingFetch) bool {
	switch r {
	case wakeAppended:
		return f.fromFollower()
	case wakeCommitted:
		return !f.fromFollower()
	}
	return true
}

// wake re-reads every fetch waiting on a partition that went away or
// changed roles, and answers them: followers and consumers must go
// elsewhere.
func (w *fetchWaiters) wake(key partitionKey) {
	w.wakeWaiting(key, wakeMoved)
	if list := w.byPartition[key]; list != nil && len(list.fetches) == 0 {
		delete(w.byPartition, key)
	}
}

// wakeFollowers re-reads and answers the followers' fetches waiting on a
// partition that its leader just appended to.
func (w *fetchWaiters) wakeFollowers(key partitionKey) {
	w.wakeWaiting(key, wakeAppended)
}

// wakeConsumers re-reads the consumers' fetches waiting on a partition
// whose high watermark moved, answering those that now have enough.
func (w *fetchWaiters) wakeConsumers(key partitionKey) {
	w.wakeWaiting(key, wakeCommitted)
}

func (w *fetchWaiters) wakeWaiting(key partitionKey, reason wakeReason) {
	// A copy, since answering a fetch removes it from the list. It
	// starts in an array on the stack: a partition rarely has more
	// fetches waiting than that, and every append and every high
	// watermark move comes here.
	list := w.byPartition[key]
	if list == nil {
		return
	}
	var onStack [wakeCopyInline]*pendingFetch
	waiting := append(onStack[:0], list.fetches...)
	for _, f := range waiting {
		if f.done || f.reading {
			continue
		}
		if !reason.concerns(f) {
			continue
		}
		if f.exchange.gone() {
			w.remove(f)
			f.done = true
			f.timer.Stop()
			continue
		}
		if f.read() || f.fromFollower() {
			w.remove(f)
			f.answer()
		}
	}
}

// wakeCopyInline is how many waiting fetches wakeWaiting copies without
// allocating.
const wakeCopyInline = 8

// failAll answers every waiting fetch with what it has (shutdown).
func (w *fetchWaiters) failAll() {
	keys := make([]partitionKey, 0, len(w.byPartition))
	for key := range w.byPartition {
		keys = append(keys, key)
	}
	slices.SortFunc(keys, comparePartitionKeys)
	for _, key := range keys {
		for _, f := range append([]*pendingFetch(nil), w.byPartition[key].fetches...) {
			w.remove(f)
			f.answer()
		}
	}
}
