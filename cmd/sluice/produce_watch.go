package main

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// deliveryWatch gives up on a produce whose broker stopped answering.
//
// kgo fails a record after its delivery timeout only if the record was
// never sent or its broker answered: an idempotent batch in flight to a
// broker that stopped answering (paused, or cut off without a reset) is
// kept until an answer comes, which may be never, since only the answer
// says whether it was written. Kafka's producer fails it after
// delivery.timeout.ms. The watch takes the producer's side of that rule
// and nothing more: it cancels the run once a broker has left a Produce
// request unanswered for the delivery timeout (and deliveryWatchGrace),
// across reconnections, while records are pending. A broker that answers,
// even with an error kgo retries (NOT_ENOUGH_REPLICAS), is not silent:
// kgo fails those records itself, with the error that says why.
//
// It follows Produce requests through kgo's hooks, so it is only for
// acks other than 0, where every Produce request is answered.
type deliveryWatch struct {
	timeout time.Duration
	cancel  context.CancelFunc
	ticker  *time.Ticker
	done    chan struct{}

	mu      sync.Mutex
	pending int                      // records handed to the client, not yet settled
	silent  map[int32]*brokerSilence // by node id
	fired   bool
}

// brokerSilence is one broker's unanswered Produce requests: how many are
// outstanding on its connection, and since when it has left one
// unanswered. since survives a reconnection (kgo's read timeout closes
// the connection and sends the batch again): only an answer ends it.
type brokerSilence struct {
	outstanding int
	since       time.Time
}

// deliveryWatchGrace is how much longer than the delivery timeout the
// watch waits; deliveryWatchTick is how often it looks.
const (
	deliveryWatchGrace = time.Second
	deliveryWatchTick  = 100 * time.Millisecond
)

// watchDelivery starts a watch that calls cancel once a Produce request
// has gone unanswered for timeout (and the grace) while records are
// pending. The client must be given it as a hook (kgo.WithHooks); stop
// ends it.
func watchDelivery(timeout time.Duration, cancel context.CancelFunc) *deliveryWatch {
	w := &deliveryWatch{
		timeout: timeout + deliveryWatchGrace,
		cancel:  cancel,
		ticker:  time.NewTicker(deliveryWatchTick),
		done:    make(chan struct{}),
		silent:  map[int32]*brokerSilence{},
	}
	go w.watch()
	return w
}

func (w *deliveryWatch) watch() {
	for {
		select {
		case <-w.done:
			return
		case now := <-w.ticker.C:
			w.check(now)
		}
	}
}

// check cancels the run if records are pending and some broker has been
// silent for the timeout.
func (w *deliveryWatch) check(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fired || w.pending == 0 {
		return
	}
	for _, s := range w.silent {
		if !s.since.IsZero() && now.Sub(s.since) >= w.timeout {
			w.fired = true
			w.cancel()
			return
		}
	}
}

// sent notes a record handed to the client.
func (w *deliveryWatch) sent() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending++
}

// settled notes a record acknowledged or failed.
func (w *deliveryWatch) settled() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending--
}

func (w *deliveryWatch) broker(node int32) *brokerSilence {
	s := w.silent[node]
	if s == nil {
		s = &brokerSilence{}
		w.silent[node] = s
	}
	return s
}

// OnBrokerWrite implements kgo.HookBrokerWrite: a Produce request sent.
func (w *deliveryWatch) OnBrokerWrite(meta kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key != int16(kmsg.Produce) || err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.broker(meta.NodeID)
	if s.since.IsZero() {
		s.since = time.Now()
	}
	s.outstanding++
}

// OnBrokerRead implements kgo.HookBrokerRead: a Produce answer read. The
// broker answers in order, so the next outstanding request was sent no
// earlier than this one; counting its silence from now is the lenient
// side.
func (w *deliveryWatch) OnBrokerRead(meta kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key != int16(kmsg.Produce) || err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.broker(meta.NodeID)
	s.outstanding = max(0, s.outstanding-1)
	if s.outstanding == 0 {
		s.since = time.Time{}
	} else {
		s.since = time.Now()
	}
}

// OnBrokerDisconnect implements kgo.HookBrokerDisconnect: the requests
// outstanding on the connection will not be answered on it; kgo sends
// their batches again.
func (w *deliveryWatch) OnBrokerDisconnect(meta kgo.BrokerMetadata, _ net.Conn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.broker(meta.NodeID).outstanding = 0
}

// expired reports whether the watch gave up on the run.
func (w *deliveryWatch) expired() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fired
}

// stop ends the watch.
func (w *deliveryWatch) stop() {
	w.ticker.Stop()
	close(w.done)
}
