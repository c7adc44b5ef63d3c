package kernel

import "testing"

// BenchmarkScheduleAndStep measures the kernel's cost per event in the shape
// a cluster seed has: about 200 events pending, every event scheduling the
// next one, and a third of them cancelled before they run (timers that a
// reply made unnecessary). One op is one event scheduled.
func BenchmarkScheduleAndStep(b *testing.B) {
	const pending = 200
	k := NewKernel(1, nil)
	owner := NewProcess("n1")
	rng := NewRand(1, "bench/delays")
	events := make([]*Event, pending)
	slot := 0
	var reschedule func()
	reschedule = func() {
		events[slot] = k.ScheduleEvent(rng.Int64N(1_000_000), owner, "bench", reschedule)
		slot = (slot + 1) % pending
	}
	for range pending {
		reschedule()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i%3 == 0 {
			// Cancel one pending event and replace it, as a timer reset does.
			if events[slot].Stop() {
				reschedule()
			}
		}
		k.Step()
	}
}
