package kernel

import (
	"fmt"
	"math/rand/v2"
)

// Kernel is the simulator's heart: virtual time and one queue of events
// (kept as two heaps, see soon) for every simulated node, client and
// fault. It runs on one goroutine and picks the earliest event; events due
// at the same nanosecond are ordered by a number drawn from the seeded
// PRNG when they were scheduled, so ties are broken randomly yet
// reproducibly.
type Kernel struct {
	seed uint64
	now  int64 // virtual nanoseconds since the run began
	// The queue of events is split in two heaps by how far ahead an event
	// was scheduled (see soonDelayMax): soon holds deliveries and disk
	// completions, a few milliseconds ahead; later holds the timers set
	// far ahead, most of which are stopped before they fire. The next
	// event is the earlier of the two fronts, so the split changes no
	// order; it keeps the heap that nearly every event goes through small
	// and shallow.
	soon, later eventQueue
	// ties orders events due at the same nanosecond. It is a stream of its
	// own so that scheduling one more event (a new timer in some
	// component) does not shift the world's random decisions in rng. It
	// is NewRand's source itself, drawn from directly: rand.Rand's Uint64
	// returns its source's, through an interface call, at every event.
	ties  *rand.PCG
	rng   *rand.Rand
	seq   uint64
	steps uint64
	trace *Trace

	// spareEvents[spareNext:] are allocated Events not yet handed out
	// (see newEvent). An index rather than reslicing: storing the slice
	// back at every event was a pointer write, with its write barrier.
	spareEvents []Event
	spareNext   int

	// recycledEvents are events of Post and ScheduleHandle that have run
	// or been dropped, for the next ones to reuse (see Handle).
	recycledEvents []*Event

	// stepsMax bounds a run, so a livelock shows up as a failure rather
	// than a hang.
	stepsMax uint64
}

// Event is one scheduled callback, and the handle its scheduler keeps to
// stop it. owner, when set, is the process whose incarnation must still be
// alive for the event to run: a crash drops every event the dead
// incarnation had scheduled.
//
// The event's place in time (when, and its tie) lives in the queue entry,
// not here: the queue compares entries without following a pointer per
// comparison, and a smaller Event is a cheaper allocation.
type Event struct {
	kernel *Kernel
	owner  *Process
	label  string
	action Action
	// incarnation is the owner's incarnation when the event was
	// scheduled, in 32 bits (no run crashes a process four billion
	// times).
	incarnation uint32
	// generation counts the uses of a recycled event: a Handle stops the
	// event only while it is still the use the Handle was given for.
	// (32 bits: a run is bounded far below four billion events.)
	generation uint32
	// queued is set while the event has an entry in a heap (soon or
	// later, see Kernel), which a stopped event keeps for a while (see
	// eventQueue).
	queued    bool
	soon      bool // the heap it is in is Kernel.soon
	cancelled bool
	// held is set while the event waits for its suspended owner to
	// resume (see Suspend): out of the queue, yet not run.
	held bool
	// recycled is set on the events of Post and ScheduleHandle, whose
	// *Event never leaves the kernel: the kernel takes such an event
	// back once it has run or been dropped (see release).
	recycled bool
}

// Handle stops an event scheduled by ScheduleHandle. Unlike an *Event it
// may be kept after its event ran or was dropped, when the kernel reuses
// the event for another: it stops the event only while that is still the
// use it was handed out for, and reports false otherwise, as Event.Stop
// does for an event that already ran. The zero Handle stops nothing.
type Handle struct {
	event      *Event
	generation uint32
}

// Stop stops the event if it is still the Handle's use, and reports
// whether it did (see Event.Stop).
func (h Handle) Stop() bool {
	if h.event == nil || h.event.generation != h.generation {
		return false
	}
	return h.event.Stop()
}

// Action is what an event does when it runs. A func() is one, through
// Func; a scheduler on a hot path passes instead an object it has anyway
// (a connection's direction for its deliveries, a request for its timeout),
// whose Run method does the work: a closure would be an allocation per
// event.
type Action interface{ Run() }

// Func is a func() as an Action. A func value is a single pointer, which
// an interface holds as it is: wrapping one allocates nothing.
type Func func()

// Run calls f.
func (f Func) Run() { f() }

// NewKernel starts a kernel at time zero with the run's seed.
func NewKernel(seed uint64, trace *Trace) *Kernel {
	if trace == nil {
		trace = NewTrace(nil)
	}
	return &Kernel{
		seed:     seed,
		ties:     newPCG(seed, "kernel/ties"),
		rng:      NewRand(seed, "kernel"),
		trace:    trace,
		stepsMax: 50_000_000,
	}
}

// NewRand derives an independent PRNG stream from the seed and a purpose.
// Separate streams keep one part's draws from shifting another's when code
// changes, which keeps shrunk and regression cases stable.
func NewRand(seed uint64, purpose string) *rand.Rand {
	return rand.New(newPCG(seed, purpose))
}

// newPCG is the source of NewRand's stream for seed and purpose.
func newPCG(seed uint64, purpose string) *rand.PCG {
	h := uint64(14695981039346656037)
	for i := 0; i < len(purpose); i++ {
		h ^= uint64(purpose[i])
		h *= 1099511628211
	}
	return rand.NewPCG(seed, h)
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
// stops it from running (see Event.Stop). Code on a hot path should keep
// the *Event from ScheduleEvent instead: the cancel function is one more
// allocation per event.
func (k *Kernel) Schedule(delay int64, owner *Process, label string, fn func()) (cancel func() bool) {
	return k.ScheduleEvent(delay, owner, label, fn).Stop
}

// ScheduleEvent is Schedule returning the event itself, whose Stop method
// cancels it. An *Event satisfies core.Timer as it is, so a simulated
// clock's AfterFunc can hand it out without wrapping it.
func (k *Kernel) ScheduleEvent(delay int64, owner *Process, label string, fn func()) *Event {
	return k.ScheduleAction(delay, owner, label, Func(fn))
}

// ScheduleAction is ScheduleEvent with an Action to run rather than a
// func: a caller that holds an object with a Run method schedules it
// without allocating a closure. The kernel lets go of the action once the
// event has run, been stopped or been dropped, so a caller may reuse the
// object for another event from then on.
func (k *Kernel) ScheduleAction(delay int64, owner *Process, label string, action Action) *Event {
	e := k.newEvent()
	k.schedule(e, delay, owner, label, action)
	return e
}

// Post is ScheduleAction for an event nobody will stop: it hands out no
// handle, so the kernel reuses the event once it has run or been dropped.
// Network deliveries, disk completions and the like, a large share of a
// run's events, cost no allocation this way.
func (k *Kernel) Post(delay int64, owner *Process, label string, action Action) {
	k.schedule(k.recycledEvent(), delay, owner, label, action)
}

// ScheduleHandle is ScheduleAction returning a Handle rather than the
// event: the kernel reuses the event once it has run or been dropped, and
// a Handle kept past then stops nothing. (core's timers cannot have one: a
// core.Timer is an interface, and a Handle in one would be an allocation.)
func (k *Kernel) ScheduleHandle(delay int64, owner *Process, label string, action Action) Handle {
	e := k.recycledEvent()
	k.schedule(e, delay, owner, label, action)
	return Handle{event: e, generation: e.generation}
}

// schedule queues e, fresh from newEvent or recycledEvent (so zero but for
// its generation and recycled fields), to run action after delay. Setting
// the fields one by one is the whole initialisation; copying in a
// composite literal would write the struct twice, through the write
// barrier's bulk path.
func (k *Kernel) schedule(e *Event, delay int64, owner *Process, label string, action Action) {
	if delay < 0 {
		delay = 0
	}
	e.kernel = k
	e.owner = owner
	e.label = label
	e.action = action
	if owner != nil {
		e.incarnation = uint32(owner.incarnation)
	}
	k.push(queued{at: k.now + delay, tie: k.ties.Uint64(), seq: k.seq, event: e}, delay <= soonDelayMax)
	k.seq++
}

// soonDelayMax is the longest delay of an event that goes in the soon heap:
// longer than any network latency or disk sync a scenario draws without a
// slow-I/O fault, shorter than the timeouts the core sets.
const soonDelayMax = int64(10_000_000) // 10ms

// push adds an entry to the soon heap or to the later one.
func (k *Kernel) push(entry queued, soon bool) {
	entry.event.soon = soon
	if soon {
		k.soon.push(entry)
	} else {
		k.later.push(entry)
	}
}

// heapOf returns the heap e is in.
func (k *Kernel) heapOf(e *Event) *eventQueue {
	if e.soon {
		return &k.soon
	}
	return &k.later
}

// front returns the heap whose first entry is the earliest of all, or nil
// when both are empty.
func (k *Kernel) front() *eventQueue {
	switch {
	case k.later.Len() == 0 && k.soon.Len() == 0:
		return nil
	case k.later.Len() == 0:
		return &k.soon
	case k.soon.Len() == 0:
		return &k.later
	case before(k.later.front(), k.soon.front()):
		return &k.later
	}
	return &k.soon
}

// newEvent returns a fresh Event. Events are allocated eventsPerBlock at a
// time, in one slice, because a run schedules tens of thousands of them and
// one allocation per event was a measurable share of the kernel's cost.
// An Event handed out as an *Event is never reused, so a handle kept after
// its event ran can never stop another one; only the events of Post and
// ScheduleHandle are (see recycledEvent). The block stays in memory while
// any of its events is referenced, which is why an event lets go of its
// action once it has run or been stopped or dropped.
func (k *Kernel) newEvent() *Event {
	if k.spareNext == len(k.spareEvents) {
		k.spareEvents = make([]Event, eventsPerBlock)
		k.spareNext = 0
	}
	e := &k.spareEvents[k.spareNext]
	k.spareNext++
	return e
}

// eventsPerBlock is how many Events newEvent allocates at once: as many
// 64-byte Events as fill the allocator's 4096-byte size class.
const eventsPerBlock = 4096 / 64

// recycledEvent returns an event for Post or ScheduleHandle: one taken back
// by release if there is one, a fresh one otherwise.
func (k *Kernel) recycledEvent() *Event {
	if n := len(k.recycledEvents); n > 0 {
		e := k.recycledEvents[n-1]
		k.recycledEvents = k.recycledEvents[:n-1]
		return e
	}
	e := k.newEvent()
	e.recycled = true
	return e
}

// release lets go of an event that has left the queue, to run or because
// it was stopped or its owner died: its action goes, and a recycled event
// goes back to the kernel for another use, in a new generation so that a
// Handle of this use stops nothing from now on.
func (k *Kernel) release(e *Event) {
	if !e.recycled {
		e.action = nil
		return
	}
	*e = Event{generation: e.generation + 1, recycled: true}
	k.recycledEvents = append(k.recycledEvents, e)
}

// Stop prevents the event from running and reports whether it did so: false
// when the event already ran, was dropped, or was stopped before.
func (e *Event) Stop() bool {
	if e.cancelled || (!e.queued && !e.held) {
		return false
	}
	e.cancelled = true
	e.action = nil // never runs now; let go of what it holds
	// Its entry stays in the heap until the front or a compaction drops
	// it (see eventQueue). A held event is not in the queue; Resume
	// skips it.
	if e.queued {
		e.kernel.heapOf(e).stop(e.kernel)
	}
	return true
}

// dead reports whether an event must be skipped: cancelled, or owned by an
// incarnation that has since crashed.
func (e *Event) dead() bool {
	return e.cancelled || (e.owner != nil && (uint32(e.owner.incarnation) != e.incarnation || !e.owner.alive))
}

// next drops dead events from the front of the queue, sets aside those
// whose owner is suspended, and returns the first one that may run with the
// time it is due, or nil. The event stays at the front of the queue.
func (k *Kernel) next() (at int64, e *Event) {
	for q := k.front(); q != nil; q = k.front() {
		front := q.front()
		e := front.event
		switch {
		case e.dead():
			q.popFront()
			k.release(e)
		case e.owner != nil && e.owner.suspended:
			q.popFront()
			e.held = true
			if len(e.owner.held) >= heldEventsMax {
				panic(fmt.Sprintf("kernel: suspended process %s holds more than %d events", e.owner.name, heldEventsMax))
			}
			e.owner.held = append(e.owner.held, e)
		default:
			return front.at, e
		}
	}
	return 0, nil
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
			k.release(e)
			continue
		}
		// The tie keeps held events in their order: ties drawn from
		// the stream are random, these count up from zero.
		k.push(queued{at: k.now, tie: uint64(i), seq: k.seq, event: e}, true)
		k.seq++
	}
}

// Step runs the next event and reports whether there was one.
func (k *Kernel) Step() bool {
	at, e := k.next()
	if e == nil {
		return false
	}
	k.run(at, e)
	return true
}

// run runs e, the event at the front of the queue that next returned, due
// at at. RunUntil and RunWhile, which look at the next event before they
// decide to run it, call it directly rather than Step, which would look
// for it again.
func (k *Kernel) run(at int64, e *Event) {
	k.heapOf(e).popFront()
	if at < k.now {
		panic(fmt.Sprintf("kernel: event %q at %d is before now %d", e.label, at, k.now))
	}
	k.now = at
	k.steps++
	if k.steps > k.stepsMax {
		panic(fmt.Sprintf("kernel: more than %d steps; a livelock?", k.stepsMax))
	}
	k.trace.Event(k.now, e.owner, e.label)
	// The event is done once it runs: let go of its action, so a handle
	// kept after the run does not hold what the action refers to, and
	// the action's owner may schedule it again from inside Run (a
	// recycled event may be handed out again from inside Run too).
	action := e.action
	k.release(e)
	action.Run()
}

// RunUntil runs events until virtual time would pass t or nothing is left,
// then sets the time to t.
func (k *Kernel) RunUntil(t int64) {
	for at, e := k.next(); e != nil && at <= t; at, e = k.next() {
		k.run(at, e)
	}
	if t > k.now {
		k.now = t
	}
}

// RunWhile runs events while cond holds and time stays at or before limit.
// It reports whether cond became false.
func (k *Kernel) RunWhile(limit int64, cond func() bool) bool {
	for cond() {
		at, e := k.next()
		if e == nil || at > limit {
			if limit > k.now {
				k.now = limit
			}
			return !cond()
		}
		k.run(at, e)
	}
	return true
}

// Rand is the kernel's own PRNG, for decisions that belong to the world
// (fault draws, latencies), not to any node.
func (k *Kernel) Rand() *rand.Rand { return k.rng }
