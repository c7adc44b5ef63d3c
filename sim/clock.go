package sim

import (
	"sluice/sim/kernel"
	"time"

	"sluice/core"
)

// simEpoch is the wall-clock date every run starts at, so record timestamps
// and time-based retention are reproducible too.
var simEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()

// Clock is a machine's clock. Its wall time can drift (run at a rate a little
// off true) and jump (an NTP step, a VM resume); monotonic time drifts with it
// but never jumps, as CLOCK_MONOTONIC behaves. Timers run on monotonic time.
//
// Faults it injects: drift (SetRate) and jumps (Jump), both driven by the
// nemesis.
type Clock struct {
	kernel  *kernel.Kernel
	owner   *kernel.Process
	rate    float64 // local nanoseconds per virtual nanosecond
	wall    int64   // wall time at the last rate change
	local   int64   // monotonic time at the last rate change
	virtual int64   // kernel time at the last rate change
	started int64   // monotonic time when the current process started
}

func newClock(k *kernel.Kernel, owner *kernel.Process) *Clock {
	return &Clock{kernel: k, owner: owner, rate: 1, wall: simEpoch, virtual: k.Now()}
}

// monotonic is the machine's local time since the simulation began.
func (c *Clock) monotonic() int64 {
	return c.local + int64(float64(c.kernel.Now()-c.virtual)*c.rate)
}

// Now implements core.Clock.
func (c *Clock) Now() time.Time {
	return time.Unix(0, c.wall+int64(float64(c.kernel.Now()-c.virtual)*c.rate)).UTC()
}

// Elapsed implements core.Clock: time since the process started.
func (c *Clock) Elapsed() time.Duration {
	return time.Duration(c.monotonic() - c.started)
}

// AfterFunc implements core.Clock. The timer belongs to the current
// incarnation of the machine's process and dies with it. The kernel's
// event is the core.Timer itself (its Stop cancels it): core sets and stops
// timers on every request, and a wrapper would cost an allocation each.
func (c *Clock) AfterFunc(d time.Duration, f func()) core.Timer {
	delay := int64(float64(d) / c.rate)
	return c.kernel.ScheduleEvent(delay, c.owner, "timer", f)
}

var _ core.Timer = (*kernel.Event)(nil)

// SetRate makes the clock run at rate local seconds per real second from now
// on (1.001 runs 0.1% fast). Timers already set keep their fire times.
func (c *Clock) SetRate(rate float64) {
	now := c.kernel.Now()
	c.wall += int64(float64(now-c.virtual) * c.rate)
	c.local += int64(float64(now-c.virtual) * c.rate)
	c.virtual = now
	c.rate = rate
}

// Jump moves the wall clock by d, forward or back. Monotonic time is
// unaffected.
func (c *Clock) Jump(d time.Duration) { c.wall += int64(d) }

// restart marks the start of a new process: Elapsed counts from here.
func (c *Clock) restart() { c.started = c.monotonic() }
