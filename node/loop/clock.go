package loop

import (
	"time"

	"sluice/core"
)

// Clock is core.Clock on the real clock, with timers that fire on a Loop.
// Its methods and its timers' Stop must be called on the loop, as core does.
type Clock struct {
	loop  *Loop
	start time.Time // carries Go's monotonic reading, for Elapsed
}

var _ core.Clock = (*Clock)(nil)

// NewClock returns a clock whose timers run their functions on l and whose
// Elapsed counts from now.
func NewClock(l *Loop) *Clock {
	if l == nil {
		panic("loop: NewClock with a nil Loop")
	}
	return &Clock{loop: l, start: time.Now()}
}

// Now returns the wall clock. The monotonic reading Go attaches is stripped:
// Now is a date that may jump (core.Clock says so), and a comparison of two
// Now values should behave as it does in the simulator, on the wall clock.
func (c *Clock) Now() time.Time {
	return time.Now().Round(0)
}

// Elapsed returns the monotonic time since NewClock, immune to clock jumps.
func (c *Clock) Elapsed() time.Duration {
	return time.Since(c.start)
}

// AfterFunc runs f on the loop once d has elapsed, unless the timer is
// stopped first. A non-positive d posts f at once, so it runs on a later
// turn of the loop, never inside this call. If the loop has stopped, f never
// runs.
func (c *Clock) AfterFunc(d time.Duration, f func()) core.Timer {
	if f == nil {
		panic("loop: AfterFunc with a nil function")
	}
	t := &timer{function: f}
	if d <= 0 {
		c.loop.Post(t.fire)
		return t
	}
	// The runtime's timer goroutine only posts: t's fields are read and
	// written on the loop alone.
	t.runtimeTimer = time.AfterFunc(d, func() { c.loop.Post(t.fire) })
	return t
}

// timer is a pending AfterFunc.
type timer struct {
	function func()

	// runtimeTimer is nil for a timer posted at once.
	runtimeTimer *time.Timer

	// done is set, on the loop, when the timer fires or is stopped. The
	// runtime timer may already have posted fire when Stop runs; fire then
	// finds done set and does nothing, which is what makes Stop's answer
	// true.
	done bool
}

func (t *timer) fire() {
	if t.done {
		return
	}
	t.done = true
	t.function()
}

// Stop implements core.Timer.
func (t *timer) Stop() bool {
	if t.done {
		return false
	}
	t.done = true
	if t.runtimeTimer != nil {
		// Frees the runtime timer early; if it already fired, its posted
		// fire is harmless.
		t.runtimeTimer.Stop()
	}
	return true
}
