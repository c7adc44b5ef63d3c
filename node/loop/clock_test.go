package loop

import (
	"testing"
	"time"
)

func TestTimersFireOnTheLoopGoroutineInDeadlineOrder(t *testing.T) {
	l := startLoop(t, 64)
	clock := NewClock(l)
	fired := make(chan string, 3)
	onLoop(t, l, func() {
		for _, timer := range []struct {
			name  string
			delay time.Duration
		}{{"late", 30 * time.Millisecond}, {"now", 0}, {"soon", time.Millisecond}} {
			clock.AfterFunc(timer.delay, func() {
				if currentGoroutineID() != l.goroutineID.Load() {
					panic("a timer fired off the loop goroutine")
				}
				fired <- timer.name
			})
		}
	})
	// Deadlines 0, 1 ms and 30 ms apart fire in that order however slow
	// the machine, since a later deadline cannot be reached first.
	for _, want := range []string{"now", "soon", "late"} {
		if got := receive(t, fired, "timer "+want); got != want {
			t.Fatalf("fired %q, want %q", got, want)
		}
	}
}

func TestAZeroDelayTimerNeverRunsInsideAfterFunc(t *testing.T) {
	l := startLoop(t, 4)
	clock := NewClock(l)
	onLoop(t, l, func() {
		ran := false
		clock.AfterFunc(0, func() { ran = true })
		if ran {
			t.Error("AfterFunc(0) ran its function inside the call")
		}
	})
}

func TestStopBeforeTheDeadline(t *testing.T) {
	l := startLoop(t, 4)
	clock := NewClock(l)
	ran := false
	onLoop(t, l, func() {
		timer := clock.AfterFunc(time.Hour, func() { ran = true })
		if !timer.Stop() {
			t.Error("Stop of a pending timer reported false")
		}
		if timer.Stop() {
			t.Error("a second Stop reported true")
		}
	})
	onLoop(t, l, func() {
		if ran {
			t.Error("a stopped timer ran")
		}
	})
}

// The hard case: the runtime timer has fired and posted the call, which sits
// in the inbox when Stop runs. Stop must still win.
func TestStopAfterTheCallWasPostedButBeforeItRan(t *testing.T) {
	l := startLoop(t, 4)
	clock := NewClock(l)
	ran := false
	onLoop(t, l, func() {
		timer := clock.AfterFunc(time.Microsecond, func() { ran = true })
		if !pollUntil(func() bool { return len(l.inbox) == 1 }) {
			t.Error("the timer never posted its call")
			return
		}
		if !timer.Stop() {
			t.Error("Stop of a timer whose call was posted but not run reported false")
		}
	})
	onLoop(t, l, func() {
		if ran {
			t.Error("a timer ran after Stop reported true")
		}
	})
}

func TestStopOfAZeroDelayTimerBeforeItsTurn(t *testing.T) {
	l := startLoop(t, 4)
	clock := NewClock(l)
	ran := false
	onLoop(t, l, func() {
		timer := clock.AfterFunc(0, func() { ran = true })
		if !timer.Stop() {
			t.Error("Stop of a posted zero-delay timer reported false")
		}
	})
	onLoop(t, l, func() {
		if ran {
			t.Error("a stopped zero-delay timer ran")
		}
	})
}

func TestStopAfterFiringReportsFalse(t *testing.T) {
	l := startLoop(t, 4)
	clock := NewClock(l)
	fired := make(chan struct{})
	var timer interface{ Stop() bool }
	onLoop(t, l, func() {
		timer = clock.AfterFunc(time.Microsecond, func() { close(fired) })
	})
	receive(t, fired, "the timer to fire")
	onLoop(t, l, func() {
		if timer.Stop() {
			t.Error("Stop after the timer fired reported true")
		}
	})
}

func TestElapsedIsMonotonicAndNowHasNoMonotonicReading(t *testing.T) {
	clock := NewClock(New(1))
	first := clock.Elapsed()
	second := clock.Elapsed()
	if first < 0 || second < first {
		t.Fatalf("Elapsed went %v then %v", first, second)
	}
	now := clock.Now()
	if now != now.Round(0) {
		t.Error("Now carries a monotonic reading")
	}
}

func TestEntropyInstancesDiffer(t *testing.T) {
	first, second := NewEntropy(), NewEntropy()
	// Two 64-bit draws from independent OS seeds collide with probability
	// 2^-64 per pair; three pairs in a row never will.
	same := 0
	for range 3 {
		if first.Uint64() == second.Uint64() {
			same++
		}
	}
	if same == 3 {
		t.Fatal("two entropies seeded from the OS drew the same numbers")
	}
}
