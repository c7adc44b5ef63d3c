package broker

import (
	"slices"
	"time"

	"sluice/core"
)

// imageWaitersMax bounds the answers waiting for this broker's image to
// catch up; beyond it an answer is sent at once.
const imageWaitersMax = 10_000

// imageWaitMax bounds how long one answer waits for the image.
const imageWaitMax = 30 * time.Second

// imageWaiters hold answers until the broker's own image shows what a
// controller committed: a client told "topic created" by this broker then
// finds the topic in this broker's Metadata. A controller elsewhere
// answers once its own node has applied the change; this broker applies
// it a little later, as it reaches it in the metadata log.
type imageWaiters struct {
	broker  *Broker
	waiting []*imageWaiter
}

type imageWaiter struct {
	ready    func() bool
	done     func()
	timer    core.Timer
	finished bool
}

func newImageWaiters(b *Broker) *imageWaiters { return &imageWaiters{broker: b} }

// wait calls done once ready reports true after an applied record (at once
// if it already does), or after imageWaitMax, or when the broker stops.
func (w *imageWaiters) wait(ready func() bool, done func()) {
	if ready() || len(w.waiting) >= imageWaitersMax || w.broker.stopped {
		done()
		return
	}
	waiter := &imageWaiter{ready: ready, done: done}
	waiter.timer = w.broker.w.Clock.AfterFunc(imageWaitMax, func() {
		w.broker.log.Warn("answering before this broker's metadata (or its replicas of a new topic) caught up", "waited", imageWaitMax)
		w.finish(waiter)
	})
	w.waiting = append(w.waiting, waiter)
}

// check finishes every waiter whose condition now holds, in the order
// they began waiting.
func (w *imageWaiters) check() {
	var ready []*imageWaiter
	for _, waiter := range w.waiting {
		if waiter.ready() {
			ready = append(ready, waiter)
		}
	}
	for _, waiter := range ready {
		w.finish(waiter)
	}
}

// releaseAll finishes every waiter (shutdown).
func (w *imageWaiters) releaseAll() {
	for _, waiter := range slices.Clone(w.waiting) {
		w.finish(waiter)
	}
}

// finish calls a waiter's done once and drops it.
func (w *imageWaiters) finish(waiter *imageWaiter) {
	if waiter.finished {
		return
	}
	waiter.finished = true
	waiter.timer.Stop()
	kept := w.waiting[:0]
	for _, other := range w.waiting {
		if other != waiter {
			kept = append(kept, other)
		}
	}
	clear(w.waiting[len(kept):])
	w.waiting = kept
	waiter.done()
}
