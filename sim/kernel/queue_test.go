package kernel

import (
	"reflect"
	"slices"
	"testing"
)

// TestStoppedEventsLeaveTheQueue checks that a stopped event's entry does
// not outstay its welcome: the heaps count the stopped entries they still
// hold, and compact them away before they make up half of a heap (of
// compactEntriesMin entries or more). It also checks that the events left
// still run in time order, each exactly once.
func TestStoppedEventsLeaveTheQueue(t *testing.T) {
	const events = 200
	k := NewKernel(7, nil)
	rng := NewRand(7, "test/delays")
	cancels := make([]func() bool, events)
	ran := make([]int, events)
	delays := make([]int64, events)
	for i := range events {
		i := i
		delays[i] = rng.Int64N(3 * soonDelayMax) // in both heaps
		cancels[i] = k.Schedule(delays[i], nil, "e", func() { ran[i]++ })
	}
	// Two events in three are stopped, enough for both heaps to compact.
	cancelled, compactions := 0, 0
	for i := range events {
		if i%3 == 2 {
			continue
		}
		lengths := k.soon.Len() + k.later.Len()
		if !cancels[i]() {
			t.Fatalf("event %d: first cancel reported nothing cancelled", i)
		}
		if cancels[i]() {
			t.Fatalf("event %d: second cancel reported a cancellation", i)
		}
		cancelled++
		if k.soon.Len()+k.later.Len() < lengths {
			compactions++
		}
		for _, q := range []*eventQueue{&k.soon, &k.later} {
			stopped := 0
			for _, entry := range q.entries {
				if entry.event.cancelled {
					stopped++
				}
			}
			if stopped != q.stopped {
				t.Fatalf("after %d cancels a heap holds %d stopped entries and counts %d", cancelled, stopped, q.stopped)
			}
			if q.Len() >= compactEntriesMin && 2*stopped >= q.Len() {
				t.Fatalf("after %d cancels a heap of %d entries holds %d stopped ones", cancelled, q.Len(), stopped)
			}
		}
	}
	if compactions == 0 {
		t.Fatalf("%d cancels of %d events compacted no heap", cancelled, events)
	}
	if live := k.soon.Len() - k.soon.stopped + k.later.Len() - k.later.stopped; live != events-cancelled {
		t.Fatalf("queue holds %d live events after %d cancels of %d, want %d", live, cancelled, events, events-cancelled)
	}
	last := int64(-1)
	for k.Step() {
		if k.Now() < last {
			t.Fatalf("time went back from %d to %d", last, k.Now())
		}
		last = k.Now()
	}
	for i := range events {
		want := 1
		if i%3 != 2 {
			want = 0
		}
		if ran[i] != want {
			t.Fatalf("event %d (delay %d) ran %d times, want %d", i, delays[i], ran[i], want)
		}
		if cancels[i]() {
			t.Fatalf("event %d: cancel after the run reported a cancellation", i)
		}
	}
}

// TestBothHeapsRunInOneOrder checks that splitting the queue into the soon
// and later heaps changes no order: whatever mix of delays on either side of
// soonDelayMax, stops, and events scheduled while others run, events run in
// exactly (time, tie, sequence) order, and every one not stopped runs once.
func TestBothHeapsRunInOneOrder(t *testing.T) {
	type key struct {
		at       int64
		tie, seq uint64
	}
	less := func(a, b key) int {
		switch {
		case a.at != b.at:
			return cmpInt(a.at, b.at)
		case a.tie != b.tie:
			return cmpInt(a.tie, b.tie)
		}
		return cmpInt(a.seq, b.seq)
	}
	k := NewKernel(11, nil)
	rng := NewRand(11, "test/ops")
	keys := map[int]key{} // by event number, read from its heap entry
	var live []*Event     // scheduled and not yet stopped (maybe run)
	var liveNumbers []int
	stopped := map[int]bool{}
	var ran []int
	number := 0
	var schedule func()
	schedule = func() {
		delay := rng.Int64N(soonDelayMax / 2)
		switch rng.IntN(10) {
		case 0:
			delay = soonDelayMax // the boundary itself
		case 1, 2, 3:
			delay = soonDelayMax + 1 + rng.Int64N(5*soonDelayMax)
		}
		n := number
		number++
		e := k.ScheduleEvent(delay, nil, "e", func() {
			ran = append(ran, n)
			if number < 3000 {
				schedule()
			}
		})
		entry := entryOf(k, e)
		keys[n] = key{entry.at, entry.tie, entry.seq}
		live = append(live, e)
		liveNumbers = append(liveNumbers, n)
	}
	for range 200 {
		schedule()
	}
	for k.Step() {
		if rng.IntN(4) == 0 && len(live) > 0 {
			i := rng.IntN(len(live))
			if live[i].Stop() {
				stopped[liveNumbers[i]] = true
			}
			live = slices.Delete(live, i, i+1)
			liveNumbers = slices.Delete(liveNumbers, i, i+1)
		}
	}
	if len(ran)+len(stopped) != number {
		t.Fatalf("%d events ran and %d were stopped, of %d scheduled", len(ran), len(stopped), number)
	}
	for i, n := range ran {
		if stopped[n] {
			t.Fatalf("event %d ran after it was stopped", n)
		}
		if i > 0 && less(keys[ran[i-1]], keys[n]) >= 0 {
			t.Fatalf("event %d %+v ran after event %d %+v", n, keys[n], ran[i-1], keys[ran[i-1]])
		}
	}
	if k.soon.Len() != 0 || k.later.Len() != 0 {
		t.Fatalf("after the run the heaps hold %d and %d entries", k.soon.Len(), k.later.Len())
	}
}

func cmpInt[T int64 | uint64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestEventBlockFillsSizeClass checks that a block of events is what
// eventsPerBlock assumes: 64-byte events filling 4096 bytes at most.
func TestEventBlockFillsSizeClass(t *testing.T) {
	size := reflect.TypeFor[Event]().Size()
	if size != 64 {
		t.Fatalf("an Event is %d bytes; eventsPerBlock assumes 64", size)
	}
	if block := eventsPerBlock * size; block > 4096 || block+size <= 4096 {
		t.Fatalf("a block of %d events is %d bytes; want the most that fit 4096", eventsPerBlock, block)
	}
}

// entryOf finds e's entry in its heap.
func entryOf(k *Kernel, e *Event) queued {
	for _, entry := range k.heapOf(e).entries {
		if entry.event == e {
			return entry
		}
	}
	panic("event not queued")
}
