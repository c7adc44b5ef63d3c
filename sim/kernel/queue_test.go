package kernel

import (
	"reflect"
	"slices"
	"testing"
)

// TestCancelLeavesTheQueueAtOnce checks that a cancelled event is taken out
// of the heap when cancelled (not carried to the front), and that the
// events left still run in time order, each exactly once.
func TestCancelLeavesTheQueueAtOnce(t *testing.T) {
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
	cancelled := 0
	for i := 0; i < events; i += 3 {
		if !cancels[i]() {
			t.Fatalf("event %d: first cancel reported nothing cancelled", i)
		}
		if cancels[i]() {
			t.Fatalf("event %d: second cancel reported a cancellation", i)
		}
		cancelled++
	}
	if got, want := k.soon.Len()+k.later.Len(), events-cancelled; got != want {
		t.Fatalf("queue holds %d events after %d cancels of %d, want %d", got, cancelled, events, want)
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
		if i%3 == 0 {
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
		entry := (*k.heapOf(e))[e.index]
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
// eventsPerBlock assumes: 56-byte events filling 4096 bytes at most.
func TestEventBlockFillsSizeClass(t *testing.T) {
	size := reflect.TypeFor[Event]().Size()
	if size != 56 {
		t.Fatalf("an Event is %d bytes; eventsPerBlock assumes 56", size)
	}
	if block := eventsPerBlock * size; block > 4096 || block+size <= 4096 {
		t.Fatalf("a block of %d events is %d bytes; want the most that fit 4096", eventsPerBlock, block)
	}
}
