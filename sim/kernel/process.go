package kernel

// Process is anything in the simulation that can crash: a node's process or
// a client. Events scheduled on behalf of a process belong to its current
// incarnation; Crash ends the incarnation and with it every pending timer,
// sync completion and delivery addressed to it.
type Process struct {
	name        string
	incarnation uint64
	alive       bool
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

// Crash ends the current incarnation; its pending events will not run.
func (p *Process) Crash() {
	p.alive = false
	p.incarnation++
}

// Restart begins a new incarnation.
func (p *Process) Restart() {
	p.alive = true
}
