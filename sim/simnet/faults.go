package simnet

import (
	"fmt"
	"time"
)

// Faults are the network's continuous conditions: how slow it is, how thin,
// and how long a stalled or unanswered connection waits before giving up.
// Discrete faults (cuts, partitions, resets, crashes) are method calls on
// Network and Endpoint. The zero value is an instant, unlimited network on
// which stalls never break and dials across a cut give up after
// connectTimeoutDefault.
type Faults struct {
	// LatencyMin and LatencyMax bound the one-way latency of each segment,
	// drawn uniformly from [LatencyMin, LatencyMax].
	LatencyMin, LatencyMax time.Duration

	// BandwidthBytesPerSecond, when above zero, is the speed of each host's
	// egress link: frames leaving one host serialize on it one after
	// another. Zero means unlimited.
	BandwidthBytesPerSecond int64

	// StallBreakAfter, when above zero, breaks a connection one of whose
	// directions has held an undelivered frame behind a cut this long, as
	// TCP_USER_TIMEOUT does. Zero means a stalled connection waits for the
	// heal however long it takes. A change applies to stalls that begin
	// after it. A handshake is bounded by ConnectTimeout instead.
	StallBreakAfter time.Duration

	// ConnectTimeout is how long a dial waits for its handshake to complete
	// (it cannot while a cut lies on its path) before failing with
	// ErrConnectTimeout. Zero means connectTimeoutDefault.
	ConnectTimeout time.Duration
}

// Validate reports the first thing wrong with f, or nil.
func (f Faults) Validate() error {
	switch {
	case f.LatencyMin < 0:
		return fmt.Errorf("simnet: LatencyMin %v is negative", f.LatencyMin)
	case f.LatencyMax < f.LatencyMin:
		return fmt.Errorf("simnet: LatencyMax %v is below LatencyMin %v", f.LatencyMax, f.LatencyMin)
	case f.BandwidthBytesPerSecond < 0:
		return fmt.Errorf("simnet: BandwidthBytesPerSecond %d is negative", f.BandwidthBytesPerSecond)
	case f.StallBreakAfter < 0:
		return fmt.Errorf("simnet: StallBreakAfter %v is negative", f.StallBreakAfter)
	case f.ConnectTimeout < 0:
		return fmt.Errorf("simnet: ConnectTimeout %v is negative", f.ConnectTimeout)
	}
	return nil
}

// connectTimeout is the effective connect timeout.
func (f Faults) connectTimeout() time.Duration {
	if f.ConnectTimeout == 0 {
		return connectTimeoutDefault
	}
	return f.ConnectTimeout
}
