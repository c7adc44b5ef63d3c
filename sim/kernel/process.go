package kernel

// Process is anything in the simulation that can crash: a node's process or
// a client. Events scheduled on behalf of a process belong to its current
// incarnation; Crash ends the incarnation and with it every pending timer,
// sync completion and delivery addressed to it.
type Process struct {
	name        string
	incarnation uint64
	alive       bool

	// suspended is set between Kernel.Suspend and Kernel.Resume: the
	// process is frozen, as by SIGSTOP or a long GC pause. Events due
	// meanwhile wait in held, in the order they came due, and run at
	// the resume; time keeps passing, so its timers fire late.
	suspended bool
	held      []*Event
}

// NewProcess returns a live process with the given trace name.
func NewProcess(name string) *Process {
	return &Process{name: name, incarnation: 1, alive: true}
}

// Name is the process's name in traces.
func (p *Process) Name() string { return p.name }

// Alive reports whether the process is running.
func (p *Process) Alive() bool { return p.alive }

// Incarnation counts starts: it goes up at every crash.
func (p *Process) Incarnation() uint64 { return p.incarnation }

// Suspended reports whether the process is frozen (see Kernel.Suspend).
func (p *Process) Suspended() bool { return p.suspended }

// Crash ends the current incarnation; its pending events will not run. A
// frozen process that crashes is no longer frozen: what it held dies with
// it.
func (p *Process) Crash() {
	p.alive = false
	p.incarnation++
	p.suspended = false
	p.held = nil
}

// Restart begins a new incarnation.
func (p *Process) Restart() {
	p.alive = true
}
