package kernel

import (
	"fmt"
	"math/rand/v2"
)

// Kernel is the simulator's heart: virtual time and one queue of events for
// every simulated node, client and fault. It runs on one goroutine and picks
// the earliest event; events due at the same nanosecond are ordered by a
// number drawn from the seeded PRNG when they were scheduled, so ties are
// broken randomly yet reproducibly.
type Kernel struct {
	seed  uint64
	now   int64 // virtual nanoseconds since the run began
	queue eventQueue
	// ties orders events due at the same nanosecond. It is a stream of its
	// own so that scheduling one more event (a new timer in some
	// component) does not shift the world's random decisions in rng.
	ties  *rand.Rand
	rng   *rand.Rand
	seq   uint64
	steps uint64
	trace *Trace

	// stepsMax bounds a run, so a livelock shows up as a failure rather
	// than a hang.
	stepsMax uint64
}

// event is one scheduled callback. owner, when set, is the process whose
// incarnation must still be alive for the event to run: a crash drops every
// event the dead incarnation had scheduled.
type event struct {
	at          int64
	tie         uint64
	seq         uint64
	owner       *Process
	incarnation uint64
	label       string
	fn          func()
	cancelled   bool
	index       int
	// held is set while the event waits for its suspended owner to
	// resume (see Suspend): out of the queue, yet not run.
	held bool
}

// NewKernel starts a kernel at time zero with the run's seed.
func NewKernel(seed uint64, trace *Trace) *Kernel {
	if trace == nil {
		trace = NewTrace(nil)
	}
	return &Kernel{
		seed:     seed,
		ties:     NewRand(seed, "kernel/ties"),
		rng:      NewRand(seed, "kernel"),
		trace:    trace,
		stepsMax: 50_000_000,
	}
}

// NewRand derives an independent PRNG stream from the seed and a purpose.
// Separate streams keep one part's draws from shifting another's when code
// changes, which keeps shrunk and regression cases stable.
func NewRand(seed uint64, purpose string) *rand.Rand {
	h := uint64(14695981039346656037)
	for i := 0; i < len(purpose); i++ {
		h ^= uint64(purpose[i])
		h *= 1099511628211
	}
	return rand.New(rand.NewPCG(seed, h))
}

// Seed is the run's seed.
func (k *Kernel) Seed() uint64 { return k.seed }

// Now is virtual time in nanoseconds since the run began.
func (k *Kernel) Now() int64 { return k.now }

// Steps is the number of events run so far.
func (k *Kernel) Steps() uint64 { return k.steps }

// Trace is the run's trace.
func (k *Kernel) Trace() *Trace { return k.trace }

// Schedule runs fn after delay nanoseconds. If owner is not nil, the event
// belongs to owner's current incarnation and is dropped if owner crashes
// first. label names the event in the trace. The returned cancel function
// stops it from running.
func (k *Kernel) Schedule(delay int64, owner *Process, label string, fn func()) (cancel func() bool) {
	if delay < 0 {
		delay = 0
	}
	e := &event{
		at:    k.now + delay,
		tie:   k.ties.Uint64(),
		seq:   k.seq,
		owner: owner,
		label: label,
		fn:    fn,
	}
	k.seq++
	if owner != nil {
		e.incarnation = owner.incarnation
	}
	k.queue.push(e)
	return func() bool {
		if e.cancelled || (e.index < 0 && !e.held) {
			return false
		}
		e.cancelled = true
		// Leave the queue now: a cancelled timer would otherwise sit in
		// the heap until its time came, making every push and pop pay
		// for it. A held event is not in the queue; Resume skips it.
		if e.index >= 0 {
			k.queue.remove(e.index)
		}
		return true
	}
}

// dead reports whether an event must be skipped: cancelled, or owned by an
// incarnation that has since crashed.
func (e *event) dead() bool {
	return e.cancelled || (e.owner != nil && (e.owner.incarnation != e.incarnation || !e.owner.alive))
}

// next drops dead events from the front of the queue, sets aside those
// whose owner is suspended, and returns the first one that may run, or nil.
func (k *Kernel) next() *event {
	for k.queue.Len() > 0 {
		e := k.queue[0]
		switch {
		case e.dead():
			k.queue.popFront()
		case e.owner != nil && e.owner.suspended:
			k.queue.popFront()
			e.held = true
			if len(e.owner.held) >= heldEventsMax {
				panic(fmt.Sprintf("kernel: suspended process %s holds more than %d events", e.owner.name, heldEventsMax))
			}
			e.owner.held = append(e.owner.held, e)
		default:
			return e
		}
	}
	return nil
}

// heldEventsMax bounds the events one suspended process may hold: a
// suspension long enough to pile up more is a simulator bug.
const heldEventsMax = 1 << 20

// Suspend freezes a live process, as SIGSTOP or a stop-the-world GC pause
// would: nothing it owns runs until Resume. Its events that come due
// meanwhile are held, in the order they came due; time goes on, so on
// resume they run late, and its timers see how long the pause was. What
// others send it waits in the network. A crash ends the suspension (and
// the held events die with the incarnation). Suspending a suspended or
// dead process does nothing.
func (k *Kernel) Suspend(p *Process) {
	if !p.alive || p.suspended {
		return
	}
	p.suspended = true
	k.trace.Note(k.now, p.name, "suspended")
}

// Resume thaws a suspended process: the events it held run from now, in
// the order they came due and ahead of anything else due at this instant,
// then the process runs normally. Resuming a process that is not
// suspended does nothing.
func (k *Kernel) Resume(p *Process) {
	if !p.suspended {
		return
	}
	p.suspended = false
	held := p.held
	p.held = nil
	k.trace.Note(k.now, p.name, fmt.Sprintf("resumed with %d held events", len(held)))
	for i, e := range held {
		e.held = false
		if e.dead() {
			continue
		}
		// The tie keeps held events in their order: ties drawn from
		// the stream are random, these count up from zero.
		e.at, e.tie, e.seq = k.now, uint64(i), k.seq
		k.seq++
		k.queue.push(e)
	}
}

// Step runs the next event and reports whether there was one.
func (k *Kernel) Step() bool {
	if e := k.next(); e != nil {
		k.queue.popFront()
		if e.at < k.now {
			panic(fmt.Sprintf("kernel: event %q at %d is before now %d", e.label, e.at, k.now))
		}
		k.now = e.at
		k.steps++
		if k.steps > k.stepsMax {
			panic(fmt.Sprintf("kernel: more than %d steps; a livelock?", k.stepsMax))
		}
		k.trace.Event(k.now, e.owner, e.label)
		e.fn()
		return true
	}
	return false
}

// RunUntil runs events until virtual time would pass t or nothing is left,
// then sets the time to t.
func (k *Kernel) RunUntil(t int64) {
	for e := k.next(); e != nil && e.at <= t; e = k.next() {
		k.Step()
	}
	if t > k.now {
		k.now = t
	}
}

// RunWhile runs events while cond holds and time stays at or before limit.
// It reports whether cond became false.
func (k *Kernel) RunWhile(limit int64, cond func() bool) bool {
	for cond() {
		if e := k.next(); e == nil || e.at > limit {
			if limit > k.now {
				k.now = limit
			}
			return !cond()
		}
		k.Step()
	}
	return true
}

// Rand is the kernel's own PRNG, for decisions that belong to the world
// (fault draws, latencies), not to any node.
func (k *Kernel) Rand() *rand.Rand { return k.rng }
