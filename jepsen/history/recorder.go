package history

import (
	"errors"
	"fmt"
	"slices"
)

// historyOpsMax bounds one history: 5 million ops (2.5 million operations)
// is far beyond any run we check, and checking more would take longer than
// the run itself.
const historyOpsMax = 5_000_000

// ErrHistoryFull is returned by Invoke once the history holds historyOpsMax
// ops, counting a completion slot reserved for every running operation.
var ErrHistoryFull = errors.New("history: full")

// opsCapacityInitial is the room a new history starts with, about what one
// simulated seed records: an op is a few hundred bytes with pointers, so
// growing the slice from nothing (copying it with write barriers each
// time) showed up in the simulator's profile.
const opsCapacityInitial = 2048

// Recorder builds a history as clients run. It stamps each op with its index
// and the time from the clock it was given, and keeps Jepsen's process
// discipline: one running operation per process, and no operation at all on
// a process retired by an info completion.
//
// Recorder is not safe for concurrent use; the simulator is single-threaded
// and the black-box harness serializes its clients' calls.
type Recorder struct {
	now     func() int64
	opsMax  int // historyOpsMax; tests lower it
	ops     []Op
	running map[int]int // process → index of its running operation's invoke
	retired map[int]bool
}

// NewRecorder starts an empty history. now returns nanoseconds since the
// start of the run and must never go backwards.
func NewRecorder(now func() int64) *Recorder {
	if now == nil {
		panic("history: NewRecorder needs a clock")
	}
	return &Recorder{
		now:     now,
		opsMax:  historyOpsMax,
		ops:     make([]Op, 0, opsCapacityInitial),
		running: map[int]int{},
		retired: map[int]bool{},
	}
}

// Pending is a running operation, returned by Invoke; exactly one of OK,
// Fail or Info completes it.
type Pending struct {
	recorder *Recorder
	invoke   int
	done     bool
}

// Invoke records the start of an operation. It refuses (with an error) a
// negative process, an unknown function, a process that is still running
// an operation or was retired by an info, a payload the function does not
// take (see Validate), and a full history.
func (r *Recorder) Invoke(process int, f Func, payload Payload) (*Pending, error) {
	switch {
	case process < 0:
		return nil, fmt.Errorf("history: process %d: processes are numbered from 0", process)
	case !f.valid():
		return nil, fmt.Errorf("history: process %d: unknown function %d", process, uint8(f))
	case r.retired[process]:
		return nil, fmt.Errorf("history: process %d was retired by an info completion; use a new process", process)
	}
	if running, busy := r.running[process]; busy {
		return nil, fmt.Errorf("history: process %d is still running op %d (%s)", process, running, r.ops[running].F)
	}
	// Reserve a slot for the completion of every running operation, this
	// one included, so that completing never fails.
	if len(r.ops)+len(r.running)+2 > r.opsMax {
		return nil, ErrHistoryFull
	}
	index, err := r.append(Op{Process: process, Type: Invoke, F: f, Payload: payload.clone()})
	if err != nil {
		return nil, err
	}
	r.running[process] = index
	return &Pending{recorder: r, invoke: index}, nil
}

// OK completes the operation as done, with its results. Results that do
// not fit the operation (see Validate: an ok send acknowledges exactly the
// values it sent) are a bug in the client, and panic.
func (p *Pending) OK(results Payload) { p.complete(OK, results, "") }

// Fail completes the operation as certainly not done.
func (p *Pending) Fail(reason string) { p.complete(Fail, Payload{}, reason) }

// Info completes the operation as unknown, and retires its process.
func (p *Pending) Info(reason string) { p.complete(Info, Payload{}, reason) }

// Invocation is the invoke op, for clients building their completion from
// what they asked.
func (p *Pending) Invocation() Op { return p.recorder.ops[p.invoke] }

func (p *Pending) complete(t Type, payload Payload, reason string) {
	if p.done {
		panic(fmt.Sprintf("history: op %d (%s) completed twice", p.invoke, p.recorder.ops[p.invoke].F))
	}
	p.done = true
	r := p.recorder
	invoke := r.ops[p.invoke]
	if r.running[invoke.Process] != p.invoke {
		panic(fmt.Sprintf("history: process %d is not running op %d", invoke.Process, p.invoke))
	}
	completion := Op{Process: invoke.Process, Type: t, F: invoke.F, Payload: payload.clone(), Error: reason}
	if _, err := r.append(completion); err != nil {
		// The client that recorded this is wrong about its own results;
		// better to stop it here than to judge a garbled history later.
		panic(err.Error())
	}
	delete(r.running, invoke.Process)
	if t == Info {
		r.retired[invoke.Process] = true
	}
}

// append stamps op and adds it, if it is well formed (see checkOp, and
// checkCompletion for an ok completion).
func (r *Recorder) append(op Op) (int, error) {
	op.Index = len(r.ops)
	op.Time = r.now()
	if op.Index > 0 && op.Time < r.ops[op.Index-1].Time {
		panic(fmt.Sprintf("history: clock went back from %d to %d ns", r.ops[op.Index-1].Time, op.Time))
	}
	r.ops = append(r.ops, op)
	err := checkOp(r.ops, op.Index)
	if err == nil && op.Type != Invoke {
		err = checkCompletion(&r.ops[r.running[op.Process]], &op)
	}
	if err != nil {
		r.ops = r.ops[:op.Index]
		return 0, err
	}
	return op.Index, nil
}

// History is a copy of the ops recorded so far. Operations still running
// have an invoke and no completion; checkers treat them as info.
func (r *Recorder) History() []Op { return slices.Clone(r.ops) }

// Len is the number of ops recorded so far.
func (r *Recorder) Len() int { return len(r.ops) }

// Op is the op recorded at index (0 <= index < Len()), for a caller that
// reads the history op by op and would waste a copy of the whole of it.
// Like History, it copies the op but shares its payload's slices, which
// nobody may modify.
func (r *Recorder) Op(index int) Op { return r.ops[index] }

// clone copies every slice, so a caller reusing its buffers cannot rewrite
// recorded history.
func (p Payload) clone() Payload {
	p.Sends = slices.Clone(p.Sends)
	p.Seeks = slices.Clone(p.Seeks)
	p.Commits = slices.Clone(p.Commits)
	p.Topics = slices.Clone(p.Topics)
	p.Assigned = slices.Clone(p.Assigned)
	if p.Polls != nil {
		polls := make([]Poll, len(p.Polls))
		for i, poll := range p.Polls {
			poll.Records = slices.Clone(poll.Records)
			polls[i] = poll
		}
		p.Polls = polls
	}
	return p
}
