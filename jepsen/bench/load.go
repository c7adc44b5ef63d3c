package bench

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// Load is the shape of a produce run; the harness gives every system under
// test the same one.
type Load struct {
	// RecordBytes is the size of every value, at least StampBytes.
	RecordBytes int `json:"record_bytes"`
	// Rate is the target in records per second across all producers; 0
	// sends as fast as the system acknowledges.
	Rate float64 `json:"rate"`
	// WarmUp runs the load unmeasured first: connections, metadata,
	// leader lookups, the JIT-less but cache-cold first seconds.
	WarmUp time.Duration `json:"warm_up_ns"`
	// Duration is the measured window that follows the warm-up.
	Duration time.Duration `json:"duration_ns"`
}

// Validate reports the first bound the load breaks, if any.
func (l Load) Validate() error {
	switch {
	case l.RecordBytes < StampBytes || l.RecordBytes > RecordBytesMax:
		return fmt.Errorf("record size %d bytes: want %d to %d (every value starts with a %d-byte stamp)", l.RecordBytes, StampBytes, RecordBytesMax, StampBytes)
	case !(l.Rate >= 0 && l.Rate <= RateMax): // NaN too
		return fmt.Errorf("rate %g records/s: want 0 (as fast as possible) to %d", l.Rate, RateMax)
	case l.WarmUp < 0 || l.WarmUp > DurationMax:
		return fmt.Errorf("warm-up %v: want 0 to %v", l.WarmUp, DurationMax)
	case l.Duration <= 0 || l.Duration > DurationMax:
		return fmt.Errorf("duration %v: want more than 0, at most %v", l.Duration, DurationMax)
	}
	return nil
}

// validateProducers checks the number of producers of a run.
func validateProducers(count int) error {
	if count < 1 || count > ProducersMax {
		return fmt.Errorf("%d producers: want 1 to %d", count, ProducersMax)
	}
	return nil
}

// runClock is a run's time frame: every instant is the monotonic time
// since epoch, so a stamp written by a producer and read by a consumer in
// the same process compare on one clock.
type runClock struct {
	epoch time.Time
	// nonce marks this run's records.
	nonce uint64
	// windowStart and windowEnd bound the measured window.
	windowStart, windowEnd time.Duration
}

func newRunClock(load Load) *runClock {
	return &runClock{
		epoch:       time.Now(),
		nonce:       rand.Uint64(),
		windowStart: load.WarmUp,
		windowEnd:   load.WarmUp + load.Duration,
	}
}

func (c *runClock) now() time.Duration { return time.Since(c.epoch) }

func (c *runClock) inWindow(t time.Duration) bool {
	return t >= c.windowStart && t < c.windowEnd
}

// errorOnce keeps the first error of many goroutines.
type errorOnce struct {
	mutex sync.Mutex
	first error
}

func (e *errorOnce) keep(err error) {
	if err == nil {
		return
	}
	e.mutex.Lock()
	if e.first == nil {
		e.first = err
	}
	e.mutex.Unlock()
}

// text is the first error's message, or "" when none was kept.
func (e *errorOnce) text() string {
	e.mutex.Lock()
	defer e.mutex.Unlock()
	if e.first == nil {
		return ""
	}
	return e.first.Error()
}
