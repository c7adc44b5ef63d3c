package history

import (
	"errors"
	"fmt"
)

// historyOpsMax bounds one history: 5 million ops (2.5 million operations)
// is far beyond any run we check, and checking more would take longer than
// the run itself.
const historyOpsMax = 5_000_000

// ErrHistoryFull is returned by Invoke once the history holds historyOpsMax
// ops, counting a completion slot reserved for every running operation.
var ErrHistoryFull = errors.New("history: full")

// opsPerChunk is how many ops one chunk of a history holds. The history
// grows a chunk at a time, so it never copies what it holds and wastes at
// most one chunk's tail: a seed records a few hundred to a few thousand
// ops, and one slice sized for the largest of them cost every seed half
// a megabyte. 128 ops of 232 bytes fit the 32 KiB allocation size class.
const opsPerChunk = 128

// Recorder builds a history as clients run. It stamps each op with its index
// and the time from the clock it was given, and keeps Jepsen's process
// discipline: one running operation per process, and no operation at all on
// a process retired by an info completion.
//
// Recorder is not safe for concurrent use; the simulator is single-threaded
// and the black-box harness serializes its clients' calls.
type Recorder struct {
	now    func() int64
	opsMax int // historyOpsMax; tests lower it
	// chunks hold the ops in order, opsPerChunk each (the last may hold
	// fewer); op i is chunks[i/opsPerChunk][i%opsPerChunk].
	chunks  [][]Op
	length  int         // how many ops the chunks hold
	running map[int]int // process → index of its running operation's invoke
	retired map[int]bool

	// payloads is where recorded payloads are copied to.
	payloads payloadStore
	// sparePendings are allocated Pendings not yet handed out: Invoke
	// hands out one per operation, and allocating them a block at a time
	// saves an allocation per operation. None is ever reused.
	sparePendings []Pending
}

// pendingsPerBlock is how many Pendings Invoke allocates at once.
const pendingsPerBlock = 64

// NewRecorder starts an empty history. now returns nanoseconds since the
// start of the run and must never go backwards.
func NewRecorder(now func() int64) *Recorder {
	if now == nil {
		panic("history: NewRecorder needs a clock")
	}
	return &Recorder{
		now:     now,
		opsMax:  historyOpsMax,
		running: map[int]int{},
		retired: map[int]bool{},
	}
}

// at is the recorded op at index (0 <= index < r.length). An index out of
// range panics: every chunk's length is what it holds.
func (r *Recorder) at(index int) *Op {
	return &r.chunks[index/opsPerChunk][index%opsPerChunk]
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
		return nil, fmt.Errorf("history: process %d is still running op %d (%s)", process, running, r.at(running).F)
	}
	// Reserve a slot for the completion of every running operation, this
	// one included, so that completing never fails.
	if r.length+len(r.running)+2 > r.opsMax {
		return nil, ErrHistoryFull
	}
	index, err := r.append(Op{Process: process, Type: Invoke, F: f, Payload: r.payloads.clone(payload)})
	if err != nil {
		return nil, err
	}
	r.running[process] = index
	if len(r.sparePendings) == 0 {
		r.sparePendings = make([]Pending, pendingsPerBlock)
	}
	pending := &r.sparePendings[0]
	r.sparePendings = r.sparePendings[1:]
	pending.recorder, pending.invoke = r, index
	return pending, nil
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
func (p *Pending) Invocation() Op { return *p.recorder.at(p.invoke) }

func (p *Pending) complete(t Type, payload Payload, reason string) {
	if p.done {
		panic(fmt.Sprintf("history: op %d (%s) completed twice", p.invoke, p.recorder.at(p.invoke).F))
	}
	p.done = true
	r := p.recorder
	invoke := r.at(p.invoke)
	if r.running[invoke.Process] != p.invoke {
		panic(fmt.Sprintf("history: process %d is not running op %d", invoke.Process, p.invoke))
	}
	completion := Op{Process: invoke.Process, Type: t, F: invoke.F, Payload: r.payloads.clone(payload), Error: reason}
	if _, err := r.append(completion); err != nil {
		// The client that recorded this is wrong about its own results;
		// better to stop it here than to judge a garbled history later.
		panic(err.Error())
	}
	process := invoke.Process
	delete(r.running, process)
	if t == Info {
		r.retired[process] = true
	}
}

// append stamps op and adds it, if it is well formed (see checkOp, and
// checkCompletion for an ok completion).
func (r *Recorder) append(op Op) (int, error) {
	op.Index = r.length
	op.Time = r.now()
	var previous *Op
	if op.Index > 0 {
		previous = r.at(op.Index - 1)
		if op.Time < previous.Time {
			panic(fmt.Sprintf("history: clock went back from %d to %d ns", previous.Time, op.Time))
		}
	}
	err := checkOp(&op, op.Index, previous)
	if err == nil && op.Type != Invoke {
		err = checkCompletion(r.at(r.running[op.Process]), &op)
	}
	if err != nil {
		return 0, err
	}
	if r.length%opsPerChunk == 0 {
		r.chunks = append(r.chunks, make([]Op, 0, opsPerChunk))
	}
	last := len(r.chunks) - 1
	r.chunks[last] = append(r.chunks[last], op)
	r.length++
	return op.Index, nil
}

// History is a copy of the ops recorded so far. Operations still running
// have an invoke and no completion; checkers treat them as info.
func (r *Recorder) History() []Op {
	ops := make([]Op, 0, r.length)
	for _, chunk := range r.chunks {
		ops = append(ops, chunk...)
	}
	return ops
}

// Len is the number of ops recorded so far.
func (r *Recorder) Len() int { return r.length }

// Op is the op recorded at index (0 <= index < Len()), for a caller that
// reads the history op by op and would waste a copy of the whole of it.
// Like History, it copies the op but shares its payload's slices, which
// nobody may modify.
func (r *Recorder) Op(index int) Op { return *r.at(index) }

// Each calls visit with the index of every op recorded so far, in order,
// and the op itself: for a caller that scans the history for a field or
// two, which through Op would copy every op whole. visit must neither
// modify the op nor keep the pointer.
func (r *Recorder) Each(visit func(index int, op *Op)) {
	index := 0
	for _, chunk := range r.chunks {
		for i := range chunk {
			visit(index, &chunk[i])
			index++
		}
	}
}
