package group

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/core"
	"sluice/core/batch"
)

// pendingWrite is one append to an offsets partition, waiting to commit.
type pendingWrite struct {
	partition *partitionState
	// waiter learns the outcome: committed runs once, when the log
	// reports the records committed (nil) or lost (an error), or
	// NOT_COORDINATOR if the partition is unloaded first; timedOut
	// before it if offsets.commit.timeout.ms passes first.
	waiter   writeWaiter
	timer    core.Timer
	finished bool
	// callbacks is the waiter of a write made with functions (write).
	callbacks writeCallbacks
}

// writeWaiter is what waits for a write's outcome (see pendingWrite).
type writeWaiter interface {
	committed(err error)
	timedOut()
}

// writeCallbacks is a writeWaiter of two functions.
type writeCallbacks struct {
	onCommitted func(err error)
	onTimedOut  func()
}

func (w *writeCallbacks) committed(err error) { w.onCommitted(err) }
func (w *writeCallbacks) timedOut()           { w.onTimedOut() }

// write appends records to p's partition. committed runs exactly once with
// the outcome, never inside write; it is where the caller applies the
// records to memory, since from then on the log says they happened (or
// not). If they have not committed after offsets.commit.timeout.ms,
// timedOut runs first, so the caller can answer its client; committed
// still runs when the outcome is known. write reports whether the records
// were appended: when they were refused, committed has the reason.
func (c *Coordinator) write(p *partitionState, records []batch.Record, committed func(err error), timedOut func()) bool {
	w := &pendingWrite{callbacks: writeCallbacks{onCommitted: committed, onTimedOut: timedOut}}
	w.waiter = &w.callbacks
	return c.startWrite(p, records, w)
}

// startWrite is write for a pendingWrite the caller made, its waiter set
// (an offset commit keeps its write in its own allocation).
func (c *Coordinator) startWrite(p *partitionState, records []batch.Record, w *pendingWrite) bool {
	if p.unloaded {
		panic("group: writing to an unloaded offsets partition")
	}
	w.partition = p
	err := c.storage.Append(p.index, records, w.finish)
	if err != nil {
		c.logger.Warn("offsets write refused", "partition", p.index, "error", err)
		w.finished = true
		w.waiter.committed(err)
		return false
	}
	if !w.finished {
		p.writes = append(p.writes, w)
		w.timer = c.w.Clock.AfterFunc(c.config.OffsetCommitTimeout, w.expire)
	}
	return true
}

// expire is the write's timer: the outcome is late.
func (w *pendingWrite) expire() {
	if !w.finished {
		w.waiter.timedOut()
	}
}

// finish reports the write's outcome once, whoever learns it first: the
// log, or unloading.
func (w *pendingWrite) finish(err error) {
	if w.finished {
		return
	}
	w.finished = true
	if w.timer != nil {
		w.timer.Stop()
	}
	w.partition.writes = slices.DeleteFunc(w.partition.writes, func(other *pendingWrite) bool { return other == w })
	if w.partition.unloaded && err == nil {
		// The partition moved on before the completion arrived: the
		// new leader has the records; this node has forgotten them.
		err = kerr.NotCoordinator
	}
	w.waiter.committed(err)
}
