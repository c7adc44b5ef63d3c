package sim

import (
	"fmt"
	"log/slog"
	"sluice/sim/kernel"
	"sluice/sim/simdisk"
	"sluice/sim/simnet"

	"sluice/core"
	"sluice/node/codecs"
)

// Machine is one simulated computer: a process that can crash and restart, a
// clock that outlives the process, a disk that outlives it too (minus what
// was never synced), and a place on the network.
type Machine struct {
	Name    string
	Process *kernel.Process
	Clock   *Clock
	Disk    *simdisk.Disk
	Net     *simnet.Endpoint

	kernel   *kernel.Kernel
	buggify  *core.Buggify
	canaries *core.Canaries
	logLevel slog.Level
	onHalt   func(reason error)
	// codecs are production's compression codecs: deterministic, and
	// what a node must use to compact compressed batches.
	codecs core.Codecs
}

// MachineOptions are the per-machine parts of a scenario.
type MachineOptions struct {
	Disk     simdisk.Faults
	Buggify  *core.Buggify
	Canaries *core.Canaries
	LogLevel slog.Level

	// Codecs are the compression codecs the machine's node uses; nil
	// gives it its own. A run may share one set among its machines and
	// clients (they run one event at a time), so that each codec's
	// state is allocated once per run rather than once per machine.
	Codecs core.Codecs

	// OnHalt is called when core halts the node (after a failed fsync, for
	// one). The machine has already crashed; the scenario decides when to
	// restart it.
	OnHalt func(m *Machine, reason error)
}

// NewMachine adds a machine to the simulation, with its process running.
func NewMachine(k *kernel.Kernel, network *simnet.Network, name string, options MachineOptions) *Machine {
	process := kernel.NewProcess(name)
	m := &Machine{
		Name:     name,
		Process:  process,
		kernel:   k,
		buggify:  options.Buggify,
		canaries: options.Canaries,
		logLevel: options.LogLevel,
		codecs:   options.Codecs,
	}
	if m.codecs == nil {
		m.codecs = codecs.New()
	}
	m.Clock = newClock(k, process)
	m.Disk = simdisk.New(k, process, kernel.NewRand(k.Seed(), "disk/"+name), options.Disk)
	if network != nil {
		m.Net = network.Endpoint(name, process)
	}
	if options.OnHalt != nil {
		m.onHalt = func(reason error) { options.OnHalt(m, reason) }
	}
	return m
}

// World returns the core.World for the machine's current process. A node
// built on it lives until the next Crash.
func (m *Machine) World() core.World {
	incarnation := m.Process.Incarnation()
	w := core.World{
		Clock:    m.Clock,
		FS:       m.Disk,
		Entropy:  kernel.NewRand(m.kernel.Seed(), fmt.Sprintf("entropy/%s/%d", m.Name, incarnation)),
		Log:      slog.New(newTraceHandler(m.kernel, m.Name, m.logLevel)),
		Buggify:  m.buggify,
		Canaries: m.canaries,
		Codecs:   m.codecs,
		Halt: func(reason error) {
			if m.Process.Incarnation() != incarnation || !m.Process.Alive() {
				return
			}
			m.kernel.Trace().Note(m.kernel.Now(), m.Name, "halt: "+reason.Error())
			m.Crash()
			if m.onHalt != nil {
				m.onHalt(reason)
			}
		},
	}
	if m.Net != nil {
		w.Net = m.Net
	}
	return w
}

// Buggify is the machine's BUGGIFY sites (nil when off), kept across
// restarts, so a run can count what its sites did.
func (m *Machine) Buggify() *core.Buggify { return m.buggify }

// Crash kills the process: pending events die with it, connections break,
// and the disk keeps only what it promised to keep.
func (m *Machine) Crash() {
	m.Process.Crash()
	m.Disk.Crash()
	if m.Net != nil {
		m.Net.Crash()
	}
}

// Restart starts a new process on the machine. The caller then builds the
// node again from World().
func (m *Machine) Restart() {
	m.Process.Restart()
	m.Clock.restart()
}
