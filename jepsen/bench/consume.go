package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// Receiver is a consumer's handle on a system under test.
type Receiver interface {
	// Receive calls deliver with the value of every record it receives
	// until ctx ends (then it returns nil) or it fails. deliver is safe to
	// call from several goroutines at once; a value is only valid during
	// its call.
	Receive(ctx context.Context, deliver func(value []byte)) error
	// Close releases the receiver's connections.
	Close()
}

// ConsumeTarget says when a consume run stops: after Records records, or
// Duration after the first one arrived, whichever comes first. Either may
// be 0 (no limit), not both.
type ConsumeTarget struct {
	Records  int64         `json:"records"`
	Duration time.Duration `json:"duration_ns"`
}

// ConsumeResult is what one consume run measured. The clock runs from the
// first record's arrival to the last's, so connecting, joining and the
// first metadata round trips are not counted.
type ConsumeResult struct {
	Target             ConsumeTarget `json:"target"`
	Records            int64         `json:"records"`
	Bytes              int64         `json:"bytes"`
	Seconds            float64       `json:"seconds"`
	RecordsPerSecond   float64       `json:"records_per_second"`
	MegabytesPerSecond float64       `json:"megabytes_per_second"`
	// Complete is false when the run stopped short of Target.Records:
	// the time limit, an idle consumer, or an error.
	Complete bool   `json:"complete"`
	Error    string `json:"error,omitempty"`
}

// consumeWatchInterval is how often a consume run checks its limits.
const consumeWatchInterval = 20 * time.Millisecond

// RunConsume receives until target is met, the receiver fails, or nothing
// arrives for IdleTimeout, and measures the rate. The error is for a
// target it cannot run; a receiver's failure is in the result.
func RunConsume(ctx context.Context, target ConsumeTarget, receiver Receiver) (ConsumeResult, error) {
	if target.Records < 0 || target.Duration < 0 || target.Duration > DurationMax || (target.Records == 0 && target.Duration == 0) {
		return ConsumeResult{}, fmt.Errorf("consume target %d records, %v: want a positive count, a positive duration of at most %v, or both", target.Records, target.Duration, DurationMax)
	}
	epoch := time.Now()
	var records, bytes atomic.Int64
	// firstArrival and lastArrival are nanoseconds since epoch, plus one
	// so that 0 means "none yet".
	var firstArrival, lastArrival atomic.Int64
	reached := make(chan struct{})
	deliver := func(value []byte) {
		count := records.Add(1)
		if target.Records > 0 && count > target.Records {
			return // past the target: neither counted nor timed
		}
		now := int64(time.Since(epoch)) + 1
		firstArrival.CompareAndSwap(0, now)
		storeMax(&lastArrival, now)
		bytes.Add(int64(len(value)))
		if count == target.Records { // exactly one call sees this
			close(reached)
		}
	}

	receiveContext, cancel := context.WithCancel(ctx)
	defer cancel()
	received := make(chan error, 1)
	go func() { received <- receiver.Receive(receiveContext, deliver) }()

	result := ConsumeResult{Target: target}
	ticker := time.NewTicker(consumeWatchInterval)
	defer ticker.Stop()
	lastCount, lastProgress := int64(0), time.Now()
	receiveError := error(nil)
	receiving := true
watch:
	for {
		select {
		case <-reached:
			break watch
		case receiveError = <-received:
			receiving = false
			break watch
		case <-ctx.Done():
			receiveError = ctx.Err()
			break watch
		case <-ticker.C:
			count := records.Load()
			if count != lastCount {
				lastCount, lastProgress = count, time.Now()
			}
			first := firstArrival.Load()
			if target.Duration > 0 && first > 0 && time.Since(epoch) >= time.Duration(first-1)+target.Duration {
				break watch
			}
			if time.Since(lastProgress) >= IdleTimeout {
				receiveError = fmt.Errorf("nothing received for %v after %d records", IdleTimeout, count)
				break watch
			}
		}
	}
	cancel()
	if receiving {
		if err := <-received; err != nil && receiveError == nil && ctx.Err() == nil {
			receiveError = err
		}
	}

	if target.Records > 0 {
		result.Records = min(records.Load(), target.Records)
	} else {
		result.Records = records.Load()
	}
	result.Bytes = bytes.Load()
	if first, last := firstArrival.Load(), lastArrival.Load(); first > 0 && last > first {
		result.Seconds = time.Duration(last - first).Seconds()
		result.RecordsPerSecond = float64(result.Records) / result.Seconds
		result.MegabytesPerSecond = float64(result.Bytes) / result.Seconds / 1e6
	}
	result.Complete = target.Records == 0 || result.Records >= target.Records
	if receiveError != nil {
		result.Error = receiveError.Error()
	}
	return result, nil
}

// storeMax raises v to at least x.
func storeMax(v *atomic.Int64, x int64) {
	for {
		old := v.Load()
		if old >= x || v.CompareAndSwap(old, x) {
			return
		}
	}
}
