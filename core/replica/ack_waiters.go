package replica

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
)

// ackWaitersMax bounds the acks=all produces one partition holds while they
// wait for the high watermark; beyond it a produce is answered at once with
// REQUEST_TIMED_OUT-like backpressure (NOT_ENOUGH_REPLICAS would lie).
const ackWaitersMax = 100_000

// AckWaiter is an acks=all produce waiting for the high watermark to pass
// its last offset.
type AckWaiter struct {
	lastOffset int64
	done       func(err error)
	finished   bool
}

// Cancel forgets the waiter (the request timed out or its client left);
// done will not be called.
func (w *AckWaiter) Cancel() { w.finished = true }

// WaitForAcks calls done(nil) once every in-sync replica holds the batch
// ending at lastOffset — once the high watermark is above it — or done(err)
// if this replica stops leading first. It may call done before returning,
// when the batch is already committed.
func (p *Partition) WaitForAcks(lastOffset int64, done func(err error)) *AckWaiter {
	w := &AckWaiter{lastOffset: lastOffset, done: done}
	switch {
	case !p.IsLeader():
		w.finish(kerr.NotLeaderForPartition)
	case lastOffset < p.highWatermark:
		w.finish(nil)
	case len(p.ackWaiters) >= ackWaitersMax:
		w.finish(kerr.RequestTimedOut)
	default:
		// Appends arrive in offset order, so this is nearly always an
		// append at the end.
		i := sort.Search(len(p.ackWaiters), func(i int) bool { return p.ackWaiters[i].lastOffset > lastOffset })
		if len(p.ackWaiters) == cap(p.ackWaiters) {
			// The queue slides forward, completed from its front
			// (completeAckWaiters), so what append would grow is
			// only its few live waiters, and it would grow again a
			// few appends later: room for several more at once.
			p.ackWaiters = append(make([]*AckWaiter, 0, 2*len(p.ackWaiters)+8), p.ackWaiters...)
		}
		p.ackWaiters = append(p.ackWaiters, nil)
		copy(p.ackWaiters[i+1:], p.ackWaiters[i:])
		p.ackWaiters[i] = w
	}
	return w
}

func (w *AckWaiter) finish(err error) {
	if w.finished {
		return
	}
	w.finished = true
	w.done(err)
}

// completeAckWaiters finishes every waiter the high watermark now covers.
func (p *Partition) completeAckWaiters() {
	covered := 0
	for covered < len(p.ackWaiters) && p.ackWaiters[covered].lastOffset < p.highWatermark {
		covered++
	}
	ready := p.ackWaiters[:covered]
	p.ackWaiters = p.ackWaiters[covered:]
	for _, w := range ready {
		w.finish(nil)
	}
}

// failAckWaiters finishes every waiter with err (leadership lost).
func (p *Partition) failAckWaiters(err error) {
	waiting := p.ackWaiters
	p.ackWaiters = nil
	for _, w := range waiting {
		w.finish(err)
	}
}
