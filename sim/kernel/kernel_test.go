package kernel

import (
	"slices"
	"testing"
)

func TestEventsRunInTimeOrderWithSeededTies(t *testing.T) {
	order := func(seed uint64) []string {
		k := NewKernel(seed, nil)
		var ran []string
		for _, name := range []string{"a", "b", "c", "d", "e", "f"} {
			name := name
			k.Schedule(100, nil, name, func() { ran = append(ran, name) })
		}
		k.Schedule(50, nil, "early", func() { ran = append(ran, "early") })
		k.Schedule(200, nil, "late", func() { ran = append(ran, "late") })
		for k.Step() {
		}
		if k.Now() != 200 {
			t.Fatalf("time after the last event: %d", k.Now())
		}
		return ran
	}
	first := order(1)
	if first[0] != "early" || first[len(first)-1] != "late" || len(first) != 8 {
		t.Fatalf("time order broken: %v", first)
	}
	if !slices.Equal(first, order(1)) {
		t.Fatalf("same seed, different tie order")
	}
	differs := false
	for seed := uint64(2); seed < 20 && !differs; seed++ {
		differs = !slices.Equal(first, order(seed))
	}
	if !differs {
		t.Fatalf("ties never ordered differently across seeds: they are not random")
	}
}

func TestCancelAndCrashDropEvents(t *testing.T) {
	k := NewKernel(7, nil)
	p := NewProcess("n1")
	var ran []string
	cancel := k.Schedule(10, nil, "cancelled", func() { ran = append(ran, "cancelled") })
	k.Schedule(20, p, "dies-with-crash", func() { ran = append(ran, "dies") })
	k.Schedule(5, nil, "crash", func() { p.Crash() })
	k.Schedule(30, nil, "restart", func() {
		p.Restart()
		k.Schedule(1, p, "after-restart", func() { ran = append(ran, "after-restart") })
	})
	if !cancel() || cancel() {
		t.Fatalf("cancel should succeed once")
	}
	for k.Step() {
	}
	if !slices.Equal(ran, []string{"after-restart"}) {
		t.Fatalf("ran %v", ran)
	}
}

func TestRunUntilStopsAtTheLimit(t *testing.T) {
	k := NewKernel(3, nil)
	ran := 0
	for i := int64(1); i <= 10; i++ {
		k.Schedule(i*10, nil, "tick", func() { ran++ })
	}
	k.RunUntil(55)
	if ran != 5 || k.Now() != 55 {
		t.Fatalf("ran %d events, now %d", ran, k.Now())
	}
	stopped := k.RunWhile(1000, func() bool { return ran < 7 })
	if !stopped || ran != 7 {
		t.Fatalf("RunWhile: stopped=%v ran=%d", stopped, ran)
	}
}

func TestTraceHashCoversEvents(t *testing.T) {
	hash := func(label string) string {
		k := NewKernel(1, nil)
		k.Schedule(1, nil, label, func() {})
		for k.Step() {
		}
		return k.Trace().Hash()
	}
	if hash("x") != hash("x") || hash("x") == hash("y") {
		t.Fatalf("trace hash is not a function of the events")
	}
}

func TestSuspendHoldsEventsUntilResume(t *testing.T) {
	k := NewKernel(5, nil)
	p := NewProcess("n1")
	var ran []string
	at := map[string]int64{}
	record := func(name string) func() {
		return func() { ran = append(ran, name); at[name] = k.Now() }
	}
	k.Schedule(10, p, "first", record("first"))
	k.Schedule(20, p, "second", record("second"))
	cancelThird := k.Schedule(25, p, "third", record("third"))
	k.Schedule(15, nil, "world", record("world"))
	k.Schedule(5, nil, "suspend", func() { k.Suspend(p) })
	k.Schedule(30, nil, "cancel-third", func() {
		if !cancelThird() {
			t.Errorf("cancelling a held event failed")
		}
	})
	k.Schedule(50, nil, "resume", func() { k.Resume(p) })
	k.Schedule(60, p, "after", record("after"))
	for k.Step() {
	}
	if !slices.Equal(ran, []string{"world", "first", "second", "after"}) {
		t.Fatalf("ran %v", ran)
	}
	if at["first"] != 50 || at["second"] != 50 || at["after"] != 60 {
		t.Fatalf("held events ran at %v, want the resume time 50", at)
	}
}

func TestCrashEndsSuspensionAndDropsHeldEvents(t *testing.T) {
	k := NewKernel(6, nil)
	p := NewProcess("n1")
	ran := 0
	k.Schedule(10, p, "held", func() { ran++ })
	k.Schedule(5, nil, "suspend", func() { k.Suspend(p) })
	k.Schedule(20, nil, "crash", func() { p.Crash() })
	k.Schedule(30, nil, "restart", func() {
		p.Restart()
		k.Resume(p) // not suspended any more: does nothing
		k.Schedule(1, p, "fresh", func() { ran += 10 })
	})
	for k.Step() {
	}
	if ran != 10 || p.Suspended() {
		t.Fatalf("ran=%d suspended=%v: the held event must die with the crash", ran, p.Suspended())
	}
}

// TestRecycledEventsStopOnlyTheirOwnUse checks the events of Post and
// ScheduleHandle: the kernel reuses one once it has run or been dropped,
// and a Handle kept past then stops nothing, whatever the event is used
// for next.
func TestRecycledEventsStopOnlyTheirOwnUse(t *testing.T) {
	k := NewKernel(9, nil)
	p := NewProcess("n1")
	var ran []string
	record := func(name string) Action { return Func(func() { ran = append(ran, name) }) }

	first := k.ScheduleHandle(10, nil, "first", record("first"))
	for k.Step() {
	}
	if first.Stop() {
		t.Fatalf("a Handle stopped its event after it ran")
	}
	second := k.ScheduleHandle(10, nil, "second", record("second"))
	if second.event != first.event {
		t.Fatalf("the event that ran was not reused")
	}
	if first.Stop() {
		t.Fatalf("a stale Handle stopped the event's next use")
	}
	if !second.Stop() || second.Stop() {
		t.Fatalf("a Handle should stop its own use once")
	}
	for k.Step() {
	}
	// The stopped event left the queue and is reused by Post, which
	// neither Handle may stop.
	k.Post(10, p, "third", record("third"))
	if first.Stop() || second.Stop() {
		t.Fatalf("a stale Handle stopped a posted event")
	}
	for k.Step() {
	}
	// An event dropped because its owner crashed is reused too.
	k.Post(10, p, "dies", record("dies"))
	k.Post(5, nil, "crash", Func(p.Crash))
	for k.Step() {
	}
	if !slices.Equal(ran, []string{"first", "third"}) {
		t.Fatalf("ran %v", ran)
	}
	if got := len(k.recycledEvents); got != 2 {
		t.Fatalf("%d events wait for reuse after the run, want 2", got)
	}
}

// TestHandlesAgainstAModel schedules, stops and runs a mix of recycled and
// plain events, stopping through fresh and stale Handles alike, and checks
// each against a model: an event runs once unless stopped first, and a
// Stop succeeds exactly when its own event has neither run nor been
// stopped.
func TestHandlesAgainstAModel(t *testing.T) {
	k := NewKernel(13, nil)
	rng := NewRand(13, "test/handles")
	owner := NewProcess("n1")
	type use struct {
		handle  Handle
		event   *Event // plain events only
		ran     bool
		stopped bool
	}
	var uses []*use
	var schedule func()
	schedule = func() {
		u := &use{}
		uses = append(uses, u)
		action := Func(func() {
			if u.ran || u.stopped {
				t.Fatalf("event %p ran twice or after it was stopped", u)
			}
			u.ran = true
			if len(uses) < 3000 {
				schedule()
			}
		})
		delay := rng.Int64N(3 * soonDelayMax)
		switch rng.IntN(3) {
		case 0:
			u.handle = k.ScheduleHandle(delay, owner, "h", action)
		case 1:
			u.event = k.ScheduleAction(delay, owner, "e", action)
		default:
			k.Post(delay, owner, "p", action)
		}
	}
	for range 100 {
		schedule()
	}
	for k.Step() {
		for range 2 {
			u := uses[rng.IntN(len(uses))]
			var stopped bool
			switch {
			case u.handle != (Handle{}):
				stopped = u.handle.Stop()
			case u.event != nil:
				stopped = u.event.Stop()
			default:
				continue
			}
			if want := !u.ran && !u.stopped; stopped != want {
				t.Fatalf("Stop reported %v for an event that ran=%v stopped=%v", stopped, u.ran, u.stopped)
			}
			u.stopped = u.stopped || stopped
		}
	}
	if len(k.recycledEvents) == 0 {
		t.Fatalf("no event was recycled")
	}
	for _, u := range uses {
		if u.ran == u.stopped {
			t.Fatalf("an event ran=%v and stopped=%v: it must do exactly one", u.ran, u.stopped)
		}
	}
}
