package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"sluice/jepsen/bench"
)

// phases are the timings every system gets.
type phases struct {
	warmUp   time.Duration
	duration time.Duration
	// consumeMax bounds the consume phase, from the first record.
	consumeMax time.Duration
	// latencyRate is the fixed rate of the latency phase.
	latencyRate float64
	// settleMax is how long after its window a phase may take to settle:
	// the last acknowledgements, the consumer catching up. A system that
	// does not answer at all costs this, not minutes.
	settleMax time.Duration
}

// setUpTimeout bounds creating a topic or streams on a started system,
// which includes waiting for a cluster to form.
const setUpTimeout = time.Minute

// cell is one system's measurement at one record size in one run.
type cell struct {
	System      string                `json:"system"`
	RecordBytes int                   `json:"record_bytes"`
	Run         int                   `json:"run"`
	Produce     *bench.ProduceResult  `json:"produce,omitempty"`
	Consume     *bench.ConsumeResult  `json:"consume,omitempty"`
	Latency     *bench.EndToEndResult `json:"latency,omitempty"`
	Errors      []string              `json:"errors,omitempty"`
}

func (c *cell) fail(phase string, err any) {
	c.Errors = append(c.Errors, fmt.Sprintf("%s: %v", phase, err))
}

// measure runs the three phases on a started system, on a topic of its
// own for this record size: as fast as possible, then reading back what
// that wrote, then a fixed rate with a consumer following along.
func (h *harness) measure(ctx context.Context, t *target, c *cell) {
	topic := "bench-" + strconv.Itoa(c.RecordBytes)
	setUp, cancel := context.WithTimeout(ctx, setUpTimeout)
	err := t.connector.prepare(setUp, topic)
	cancel()
	if err != nil {
		c.fail("set-up", err)
		return
	}
	window := h.phases.warmUp + h.phases.duration

	senders, err := t.connector.senders(topic, h.settings.producers)
	if err != nil {
		c.fail("produce", err)
		return
	}
	load := bench.Load{RecordBytes: c.RecordBytes, WarmUp: h.phases.warmUp, Duration: h.phases.duration}
	phase, cancel := context.WithTimeout(ctx, window+h.phases.settleMax)
	produced, err := bench.RunProduce(phase, load, senders)
	cancel()
	closeAll(senders)
	c.Produce = &produced
	if err != nil {
		c.fail("produce", err)
	} else if produced.Failed > 0 {
		c.fail("produce", fmt.Sprintf("%d of %d records failed: %s", produced.Failed, produced.Sent, produced.FirstError))
	}

	if produced.Acknowledged == 0 {
		c.fail("skipped", "nothing was acknowledged, so neither consume nor latency can be measured")
		return
	}
	if receiver, err := t.connector.receiver(ctx, topic, false); err != nil {
		c.fail("consume", err)
	} else {
		phase, cancel := context.WithTimeout(ctx, h.phases.consumeMax+h.phases.settleMax)
		consumed, err := bench.RunConsume(phase, bench.ConsumeTarget{Records: produced.Acknowledged, Duration: h.phases.consumeMax}, receiver)
		cancel()
		receiver.Close()
		c.Consume = &consumed
		switch {
		case err != nil:
			c.fail("consume", err)
		case consumed.Error != "":
			c.fail("consume", consumed.Error)
		}
	}

	senders, err = t.connector.senders(topic, h.settings.producers)
	if err != nil {
		c.fail("latency", err)
		return
	}
	defer closeAll(senders)
	receiver, err := t.connector.receiver(ctx, topic, true)
	if err != nil {
		c.fail("latency", err)
		return
	}
	defer receiver.Close()
	load.Rate = h.phases.latencyRate
	phase, cancel = context.WithTimeout(ctx, window+2*h.phases.settleMax)
	defer cancel()
	latency, err := bench.RunEndToEnd(phase, load, senders, receiver)
	c.Latency = &latency
	switch {
	case err != nil:
		c.fail("latency", err)
	case latency.Error != "":
		c.fail("latency", latency.Error)
	case latency.Produce.Failed > 0:
		c.fail("latency", fmt.Sprintf("%d records failed: %s", latency.Produce.Failed, latency.Produce.FirstError))
	}
}
