package loop

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// postRetriesBeforeAsking bounds how often Post retries a full inbox,
// yielding in between, before it pays to find out whether its caller is the
// loop (goroutine_id.go).
const postRetriesBeforeAsking = 4

// deferredMax bounds the functions the loop may have posted to itself while
// its inbox was full and not yet run. Only the loop adds to them, one per
// Post, so passing it means a handler that posts without end: a bug, which
// crashes loudly rather than eat the memory.
const deferredMax = 1 << 20

// Loop runs posted functions one at a time on the goroutine that called Run.
//
// Functions posted by one goroutine run in the order they were posted.
// Functions posted by different goroutines interleave in the order their
// posts reached the inbox.
type Loop struct {
	// inbox holds functions posted by any goroutine. Its capacity is the
	// inbox bound: a goroutine other than the loop waits for room.
	inbox chan func()

	// stopped is closed by Stop. It releases Run and every waiting Post.
	// stoppedFlag says the same for a check without a channel operation.
	stopped     chan struct{}
	stoppedFlag atomic.Bool
	stopOnce    sync.Once

	// started guards against a second Run; goroutineID is the goroutine
	// running Run (0 before Run), so Post can tell the loop from others.
	started     atomic.Bool
	goroutineID atomic.Uint64

	// The fields below belong to the loop goroutine alone.

	// received counts the functions taken from the inbox so far.
	received uint64

	// deferred holds functions the loop posted to itself while the inbox
	// was full, in the order posted. Each may run only once the functions
	// that were in the inbox when it was posted have run, which keeps the
	// loop's own posts in order whichever path they took.
	//
	// Invariant: runAfterReceived never decreases along the slice.
	deferred []deferredFunction
}

// deferredFunction is a function the loop posted to itself.
type deferredFunction struct {
	function func()
	// runAfterReceived is the value of Loop.received at which every
	// function that was in the inbox when this one was posted has run.
	runAfterReceived uint64
}

// New returns a loop whose inbox holds up to inboxMax functions.
// It panics if inboxMax < 1: a caller passing that has a bug.
func New(inboxMax int) *Loop {
	if inboxMax < 1 {
		panic(fmt.Sprintf("loop: New with inboxMax %d < 1", inboxMax))
	}
	return &Loop{
		inbox:   make(chan func(), inboxMax),
		stopped: make(chan struct{}),
	}
}

// Post queues f to run on the loop and reports whether it was queued. It
// returns false once Stop has been called; a function queued by a Post that
// raced with Stop may never run either, since Run drops whatever is still
// queued when it stops.
//
// Called from any goroutine but the loop's, Post waits while the inbox is
// full: that wait is the backpressure that slows socket readers and disk
// workers down when the node cannot keep up. Called from the loop goroutine
// itself (a handler posting a follow-up), Post never waits, since only the
// loop could make room: f goes to a run-queue of the loop's own and still
// runs after everything the loop posted before it.
//
// The goroutine that will call Run is not the loop until it does: if it
// posts more than inboxMax functions before calling Run, it waits forever.
func (l *Loop) Post(f func()) bool {
	if f == nil {
		panic("loop: Post of a nil function")
	}
	if l.isStopped() {
		return false
	}
	select {
	case l.inbox <- f:
		return true
	default:
	}
	// The inbox is full. Asking who is calling costs a stack walk, so
	// first give the loop a few chances to make room: a busy loop takes a
	// function every few hundred nanoseconds.
	for range postRetriesBeforeAsking {
		runtime.Gosched()
		select {
		case l.inbox <- f:
			return true
		default:
		}
	}
	// Still full: everyone else waits, the loop must not.
	if l.goroutineID.Load() == currentGoroutineID() {
		l.deferFromLoop(f)
		return true
	}
	select {
	case l.inbox <- f:
		return true
	case <-l.stopped:
		return false
	}
}

// deferFromLoop queues f, posted by the loop while its inbox was full, to
// run after every function now in the inbox.
func (l *Loop) deferFromLoop(f func()) {
	if len(l.deferred) >= deferredMax {
		panic(fmt.Sprintf("loop: the loop posted %d functions to itself while its inbox was full", deferredMax))
	}
	// Only the loop receives, so the inbox cannot shrink under us; it
	// may grow, but whatever joins it now was posted after f.
	runAfter := l.received + uint64(len(l.inbox))
	if n := len(l.deferred); n > 0 && l.deferred[n-1].runAfterReceived > runAfter {
		panic("loop: a deferred function would run before one posted earlier")
	}
	l.deferred = append(l.deferred, deferredFunction{function: f, runAfterReceived: runAfter})
}

// Run runs posted functions, one at a time, until Stop. It must be called
// once; the goroutine that calls it is the loop. A panic in a function is
// not recovered: it ends the process.
func (l *Loop) Run() {
	if !l.started.CompareAndSwap(false, true) {
		panic("loop: Run called twice")
	}
	l.goroutineID.Store(currentGoroutineID())
	for {
		f := l.next()
		if f == nil {
			return
		}
		f()
	}
}

// Stop makes Run return after the function it is running, if any, and
// makes every Post, waiting or future, return false. Functions still queued
// never run. Stop may be called from any goroutine, the loop's included, and
// more than once; it does not wait for Run to return.
func (l *Loop) Stop() {
	l.stopOnce.Do(func() {
		l.stoppedFlag.Store(true)
		close(l.stopped)
	})
}

func (l *Loop) isStopped() bool { return l.stoppedFlag.Load() }

// next returns the next function to run, waiting for one if there is none,
// or nil once the loop is stopped.
func (l *Loop) next() func() {
	if l.isStopped() {
		return nil
	}
	if len(l.deferred) > 0 {
		head := l.deferred[0]
		if head.runAfterReceived <= l.received {
			l.deferred[0] = deferredFunction{}
			l.deferred = l.deferred[1:]
			if len(l.deferred) == 0 {
				l.deferred = nil
			}
			return head.function
		}
		// The head waits for functions that were in the inbox when it was
		// posted; nobody but the loop receives, so they are still there.
		select {
		case f := <-l.inbox:
			l.received++
			return f
		default:
			panic(fmt.Sprintf("loop: a deferred function waits for %d inbox functions but the inbox is empty",
				head.runAfterReceived-l.received))
		}
	}
	// Take a waiting function without the cost of a two-way select,
	// which locks both channels; wait on both only when there is none.
	select {
	case f := <-l.inbox:
		l.received++
		return f
	default:
	}
	select {
	case f := <-l.inbox:
		l.received++
		return f
	case <-l.stopped:
		return nil
	}
}
