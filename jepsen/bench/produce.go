package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Sender is one producer's handle on a system under test: a Kafka client,
// a NATS connection, a raw TCP connection. The load generator drives every
// system through this one interface, so pacing, stamping and measuring
// are the same code for all of them.
type Sender interface {
	// Send hands one record to the system and returns; done is called
	// exactly once, from any goroutine, with nil once the system
	// acknowledged the record or with the reason it failed. Send may block
	// while the sender's bound on unacknowledged records is reached: that
	// back-pressure is what paces an as-fast-as-possible run. sequence
	// counts this sender's records from 0, for systems that spread records
	// over partitions, streams or keys by it. value is the sender's until
	// done is called. A Send blocked on back-pressure gives up when ctx
	// ends, failing the record.
	Send(ctx context.Context, sequence int64, value []byte, done func(error))
	// Flush returns once every record sent so far was acknowledged or
	// failed, or when ctx ends.
	Flush(ctx context.Context) error
	// Close releases the sender's connections.
	Close()
}

// ProduceResult is what one produce run measured.
type ProduceResult struct {
	Load      Load `json:"load"`
	Producers int  `json:"producers"`
	// Records were acknowledged from the end of the warm-up until the
	// last acknowledgement of the run, and Seconds is that span: the
	// window, or longer when acknowledgements of records sent inside it
	// came after it closed. A system that acknowledges in bursts longer
	// than the window is measured over whole bursts rather than seen as
	// idle; for one that keeps up the span is the window plus the time
	// to drain the last records in flight.
	Records            int64   `json:"records"`
	Seconds            float64 `json:"seconds"`
	RecordsPerSecond   float64 `json:"records_per_second"`
	MegabytesPerSecond float64 `json:"megabytes_per_second"`
	// Latency is from LatencyFrom to the acknowledgement, for records
	// sent inside the measured window.
	Latency     LatencySummary `json:"ack_latency"`
	LatencyFrom string         `json:"latency_from"`
	// Sent, Acknowledged and Failed count every record of the run,
	// warm-up included.
	Sent         int64  `json:"sent"`
	Acknowledged int64  `json:"acknowledged"`
	Failed       int64  `json:"failed"`
	FirstError   string `json:"first_error,omitempty"`
}

// Where latency is measured from, as reports say it.
const (
	LatencyFromIntended = "the intended send time of a fixed-rate schedule (coordinated omission corrected: a stalled system is charged for the records it delayed)"
	LatencyFromHandOff  = "the moment each record was handed to the client (as fast as possible: includes time queued behind the client's pending bound)"
)

// produceTally is what the acknowledgement callbacks of a run add up.
type produceTally struct {
	clock *runClock
	pool  *valuePool
	// latency holds acknowledgement latencies of in-window records.
	latency Recorder
	// windowRecords were acknowledged after the window opened;
	// windowSentAcknowledged were sent inside it and acknowledged.
	windowRecords, windowSentAcknowledged atomic.Int64
	// lastAcknowledged is the time of the latest acknowledgement.
	lastAcknowledged           atomic.Int64
	sent, acknowledged, failed atomic.Int64
	firstError                 errorOnce
}

// RunProduce sends load through senders (one goroutine each) and measures
// it. Opening and closing the senders is the caller's: connection set-up
// is not part of the measurement. The error is for a load it cannot run or
// a flush that did not finish; records the system failed are counted in
// the result instead.
func RunProduce(ctx context.Context, load Load, senders []Sender) (ProduceResult, error) {
	if err := load.Validate(); err != nil {
		return ProduceResult{}, err
	}
	if err := validateProducers(len(senders)); err != nil {
		return ProduceResult{}, err
	}
	tally := &produceTally{clock: newRunClock(load)}
	return runProduce(ctx, load, senders, tally)
}

func runProduce(ctx context.Context, load Load, senders []Sender, tally *produceTally) (ProduceResult, error) {
	tally.pool = newValuePool(load.RecordBytes, tally.clock.nonce)
	var producers sync.WaitGroup
	for index, sender := range senders {
		producers.Add(1)
		go func() {
			defer producers.Done()
			produceLoop(ctx, load, index, len(senders), sender, tally)
		}()
	}
	producers.Wait()

	flushContext, cancel := context.WithTimeout(ctx, FlushTimeout)
	defer cancel()
	var flushError error
	for _, sender := range senders {
		if err := sender.Flush(flushContext); err != nil && flushError == nil {
			flushError = fmt.Errorf("waiting for acknowledgements after the run: %w", err)
		}
	}

	result := ProduceResult{
		Load:         load,
		Producers:    len(senders),
		Records:      tally.windowRecords.Load(),
		Latency:      tally.latency.Summary(),
		LatencyFrom:  LatencyFromHandOff,
		Sent:         tally.sent.Load(),
		Acknowledged: tally.acknowledged.Load(),
		Failed:       tally.failed.Load(),
		FirstError:   tally.firstError.text(),
	}
	if load.Rate > 0 {
		result.LatencyFrom = LatencyFromIntended
	}
	end := max(tally.clock.windowEnd, time.Duration(tally.lastAcknowledged.Load()))
	result.Seconds = (end - tally.clock.windowStart).Seconds()
	result.RecordsPerSecond = float64(result.Records) / result.Seconds
	result.MegabytesPerSecond = float64(result.Records) * float64(load.RecordBytes) / result.Seconds / 1e6
	return result, flushError
}

// produceLoop is one producer: it sends until the window ends. At a fixed
// rate each producer keeps its own schedule, offset from the others by a
// fraction of the interval so that together they send evenly; a producer
// that falls behind sends what is due at once, and its records' latency
// still counts from when they were due.
func produceLoop(ctx context.Context, load Load, index, producers int, sender Sender, tally *produceTally) {
	clock := tally.clock
	var interval, phase float64 // nanoseconds
	if load.Rate > 0 {
		interval = float64(producers) / load.Rate * float64(time.Second)
		phase = interval * float64(index) / float64(producers)
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for sequence := int64(0); ctx.Err() == nil; sequence++ {
		var intended time.Duration
		if load.Rate > 0 {
			intended = time.Duration(phase + float64(sequence)*interval)
			if intended >= clock.windowEnd {
				return
			}
			// Never early: a record sent before its time would make its
			// latency look shorter than it was.
			if wait := intended - clock.now(); wait > 0 {
				timer.Reset(wait)
				select {
				case <-timer.C:
				case <-ctx.Done():
					return
				}
			}
		} else {
			intended = clock.now()
			if intended >= clock.windowEnd {
				return
			}
		}
		buffer := tally.pool.get()
		stampValue(*buffer, intended, clock.nonce)
		tally.sent.Add(1)
		sender.Send(ctx, sequence, *buffer, func(err error) {
			tally.acknowledge(intended, buffer, err)
		})
	}
}

// acknowledge is a record's done callback.
func (t *produceTally) acknowledge(intended time.Duration, buffer *[]byte, err error) {
	acknowledgedAt := t.clock.now()
	t.pool.put(buffer)
	if err != nil {
		t.failed.Add(1)
		t.firstError.keep(err)
		return
	}
	t.acknowledged.Add(1)
	storeMax(&t.lastAcknowledged, int64(acknowledgedAt))
	if acknowledgedAt >= t.clock.windowStart {
		t.windowRecords.Add(1)
	}
	if t.clock.inWindow(intended) {
		t.windowSentAcknowledged.Add(1)
		t.latency.Record(acknowledgedAt - intended)
	}
}
