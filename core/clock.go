package core

import "time"

// Clock is a node's view of time.
type Clock interface {
	// Now is the wall clock: record timestamps, time-based retention and
	// anything else a user reads as a date. It may drift and jump, in
	// production as in the simulator, so never use it to measure a timeout.
	Now() time.Time

	// Elapsed is monotonic time since this clock started. Timeouts, lags
	// and rates are measured with it.
	Elapsed() time.Duration

	// AfterFunc calls f on the node's loop once d has elapsed, unless the
	// timer is stopped first. A non-positive d fires on the next turn of
	// the loop, never inside this call.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not happened yet and reports
	// whether it did so.
	Stop() bool
}
