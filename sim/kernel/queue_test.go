package kernel

import "testing"

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
		delays[i] = rng.Int64N(1000)
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
	if got, want := k.queue.Len(), events-cancelled; got != want {
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
