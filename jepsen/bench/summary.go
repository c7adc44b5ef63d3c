package bench

import (
	"fmt"
	"sync"
	"time"
)

// Recorder is a Histogram that many goroutines may record into at once:
// client libraries call acknowledgement callbacks from their own
// goroutines.
type Recorder struct {
	mutex     sync.Mutex
	histogram Histogram
}

// Record counts one duration, in nanoseconds.
func (r *Recorder) Record(d time.Duration) {
	r.mutex.Lock()
	r.histogram.Record(int64(d))
	r.mutex.Unlock()
}

// Summary summarizes what was recorded so far.
func (r *Recorder) Summary() LatencySummary {
	r.mutex.Lock()
	defer r.mutex.Unlock()
	return Summarize(&r.histogram)
}

// Snapshot copies the histogram, for merging with others.
func (r *Recorder) Snapshot() *Histogram {
	r.mutex.Lock()
	defer r.mutex.Unlock()
	copied := r.histogram
	return &copied
}

// LatencySummary is what a report shows of a latency histogram. Every
// duration is in nanoseconds in JSON.
type LatencySummary struct {
	Count      uint64        `json:"count"`
	Min        time.Duration `json:"min_ns"`
	P50        time.Duration `json:"p50_ns"`
	P90        time.Duration `json:"p90_ns"`
	P99        time.Duration `json:"p99_ns"`
	P999       time.Duration `json:"p99_9_ns"`
	Max        time.Duration `json:"max_ns"`
	Mean       time.Duration `json:"mean_ns"`
	OutOfRange uint64        `json:"out_of_range,omitempty"`
}

// Summarize reads the usual percentiles off a histogram of nanoseconds.
func Summarize(h *Histogram) LatencySummary {
	return LatencySummary{
		Count:      h.Count(),
		Min:        time.Duration(h.Min()),
		P50:        time.Duration(h.ValueAtQuantile(0.50)),
		P90:        time.Duration(h.ValueAtQuantile(0.90)),
		P99:        time.Duration(h.ValueAtQuantile(0.99)),
		P999:       time.Duration(h.ValueAtQuantile(0.999)),
		Max:        time.Duration(h.Max()),
		Mean:       time.Duration(h.Mean()),
		OutOfRange: h.OutOfRange(),
	}
}

// String is one line: "p50 1.2ms  p99 3.4ms  p99.9 5.6ms  max 7.8ms (n=123)".
func (s LatencySummary) String() string {
	if s.Count == 0 {
		return "no samples"
	}
	line := fmt.Sprintf("p50 %s  p99 %s  p99.9 %s  max %s  (n=%d)",
		FormatDuration(s.P50), FormatDuration(s.P99), FormatDuration(s.P999), FormatDuration(s.Max), s.Count)
	if s.OutOfRange > 0 {
		line += fmt.Sprintf(", %d out of the histogram's range", s.OutOfRange)
	}
	return line
}

// FormatDuration prints a latency with three significant digits in the
// unit that suits it: 850µs, 1.23ms, 12.3ms, 1.20s.
func FormatDuration(d time.Duration) string {
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%dns", d.Nanoseconds())
	case d < time.Millisecond:
		return trimmed(float64(d)/float64(time.Microsecond)) + "µs"
	case d < time.Second:
		return trimmed(float64(d)/float64(time.Millisecond)) + "ms"
	default:
		return trimmed(float64(d)/float64(time.Second)) + "s"
	}
}

// trimmed prints x (at least 1) with three significant digits.
func trimmed(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}
