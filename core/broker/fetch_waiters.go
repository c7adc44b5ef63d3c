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
type fetchWaiters struct {
	broker      *Broker
	byPartition map[partitionKey][]*pendingFetch
	count       int
}

func newFetchWaiters(b *Broker) *fetchWaiters {
	return &fetchWaiters{broker: b, byPartition: map[partitionKey][]*pendingFetch{}}
}

// add parks a fetch for at most wait. It reports false when full.
func (w *fetchWaiters) add(f *pendingFetch, wait time.Duration) bool {
	if w.count >= fetchWaitersMax {
		return false
	}
	w.count++
	for _, key := range f.partitions() {
		w.byPartition[key] = append(w.byPartition[key], f)
	}
	f.timer = w.broker.w.Clock.AfterFunc(wait, func() {
		w.remove(f)
		if !f.exchange.gone() {
			f.read()
		}
		f.answer()
	})
	return true
}

// remove unparks a fetch.
func (w *fetchWaiters) remove(f *pendingFetch) {
	removed := false
	for _, key := range f.partitions() {
		list := w.byPartition[key]
		for i, other := range list {
			if other == f {
				list = append(list[:i], list[i+1:]...)
				removed = true
				break
			}
		}
		if len(list) == 0 {
			delete(w.byPartition, key)
		} else {
			w.byPartition[key] = list
		}
	}
	if removed {
		w.count--
	}
}

// wake re-reads every fetch waiting on a partition whose high watermark
// moved (or that went away, or changed roles), answering those that now
// have enough. A follower's fetch is answered whatever it finds: the high
// watermark it carries is news to the follower.
func (w *fetchWaiters) wake(key partitionKey) {
	w.wakeWaiting(key, false)
}

// wakeFollowers re-reads and answers the followers' fetches waiting on a
// partition that its leader just appended to.
func (w *fetchWaiters) wakeFollowers(key partitionKey) {
	w.wakeWaiting(key, true)
}

func (w *fetchWaiters) wakeWaiting(key partitionKey, followersOnly bool) {
	waiting := append([]*pendingFetch(nil), w.byPartition[key]...)
	for _, f := range waiting {
		if f.done || f.reading || (followersOnly && !f.fromFollower()) {
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

// failAll answers every waiting fetch with what it has (shutdown).
func (w *fetchWaiters) failAll() {
	keys := make([]partitionKey, 0, len(w.byPartition))
	for key := range w.byPartition {
		keys = append(keys, key)
	}
	slices.SortFunc(keys, comparePartitionKeys)
	for _, key := range keys {
		for _, f := range append([]*pendingFetch(nil), w.byPartition[key]...) {
			w.remove(f)
			f.answer()
		}
	}
}
