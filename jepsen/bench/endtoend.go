package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// EndToEndResult is what an end-to-end run measured: the producers' side
// (throughput, acknowledgement latency) and the time from each record's
// intended send time until a concurrent consumer in the same process
// received it.
type EndToEndResult struct {
	Produce ProduceResult `json:"produce"`
	// Latency is from the intended send time (the hand-off at an
	// as-fast-as-possible rate) to delivery, for records sent inside the
	// window.
	Latency LatencySummary `json:"end_to_end_latency"`
	// Delivered counts in-window records the consumer received;
	// Expected is how many of them the system acknowledged.
	Delivered int64  `json:"delivered"`
	Expected  int64  `json:"expected"`
	Error     string `json:"error,omitempty"`
}

// drainTimeout bounds how long an end-to-end run waits, after the last
// acknowledgement, for the consumer to receive the window's records.
const drainTimeout = 30 * time.Second

// RunEndToEnd starts receiver, runs load through senders as RunProduce
// does, and waits until the receiver has seen every acknowledged record
// sent inside the window (or drainTimeout passes). The receiver should
// start at the end of the log: records of other runs are recognised by
// their nonce and ignored, as are this run's warm-up records.
func RunEndToEnd(ctx context.Context, load Load, senders []Sender, receiver Receiver) (EndToEndResult, error) {
	if err := load.Validate(); err != nil {
		return EndToEndResult{}, err
	}
	if err := validateProducers(len(senders)); err != nil {
		return EndToEndResult{}, err
	}
	tally := &produceTally{clock: newRunClock(load)}
	clock := tally.clock
	var latency Recorder
	var delivered atomic.Int64
	deliver := func(value []byte) {
		receivedAt := clock.now()
		intended, ours := readStamp(value, clock.nonce)
		if !ours || !clock.inWindow(intended) {
			return
		}
		delivered.Add(1)
		latency.Record(receivedAt - intended)
	}
	receiveContext, cancel := context.WithCancel(ctx)
	defer cancel()
	received := make(chan error, 1)
	go func() { received <- receiver.Receive(receiveContext, deliver) }()

	produced, err := runProduce(ctx, load, senders, tally)
	result := EndToEndResult{Produce: produced}
	if err != nil {
		cancel()
		<-received
		return result, err
	}
	expected := tally.windowSentAcknowledged.Load()
	ticker := time.NewTicker(consumeWatchInterval)
	defer ticker.Stop()
	deadline := time.Now().Add(drainTimeout)
	receiving := true
drain:
	for delivered.Load() < expected {
		select {
		case err := <-received:
			receiving = false
			if err != nil {
				result.Error = err.Error()
			} else {
				result.Error = "the consumer stopped early"
			}
			break drain
		case <-ctx.Done():
			result.Error = ctx.Err().Error()
			break drain
		case <-ticker.C:
			if time.Now().After(deadline) {
				result.Error = fmt.Sprintf("the consumer received %d of %d records within %v of the last acknowledgement", delivered.Load(), expected, drainTimeout)
				break drain
			}
		}
	}
	cancel()
	if receiving {
		if err := <-received; err != nil && result.Error == "" && ctx.Err() == nil {
			result.Error = err.Error()
		}
	}
	result.Latency = latency.Summary()
	result.Delivered = delivered.Load()
	result.Expected = expected
	return result, nil
}
