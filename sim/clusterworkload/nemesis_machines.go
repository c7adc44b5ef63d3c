package clusterworkload

import (
	"fmt"
	"slices"

	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/scenario"
	"sluice/sim/simclient"
)

// Faults of machines: processes (crash, power loss, pause, a failed
// fsync), disks (slow, full), clocks (jump, drift), and client machines.

func (m *nemesis) applyProcessFault(e scenario.Event) bool {
	r := m.run
	switch e.Kind {
	case scenario.KindCrash:
		n := m.resolve(e.Target)
		if n == nil || !n.up {
			return false
		}
		n.crash(-1)
		m.lasting(fmt.Sprintf("crash-%s", n.name), false, e.For, n.heal)
	case scenario.KindPowerLoss:
		r.note("power loss")
		for _, n := range r.nodes {
			n.crash(-1)
		}
		for _, n := range r.nodes {
			down := e.For + kernel.Between(m.rng, 0, e.Stagger)
			m.lasting(fmt.Sprintf("power-loss-%s", n.name), false, down, n.heal)
		}
	case scenario.KindPause:
		n := m.resolve(e.Target)
		if n == nil || !n.up || n.machine.Process.Suspended() {
			return false
		}
		process := n.machine.Process
		r.kernel.Suspend(process)
		m.lasting(fmt.Sprintf("pause-%s", n.name), false, e.For, func() { r.kernel.Resume(process) })
	case scenario.KindShutdown:
		n := m.resolve(e.Target)
		if n == nil || !n.up || n.machine.Process.Suspended() {
			return false
		}
		return n.shutdown(func() {
			// Down for For from when it stopped; at once if the
			// liveness phase began meanwhile.
			if m.stopped {
				n.heal()
				return
			}
			m.lasting(fmt.Sprintf("shutdown-%s", n.name), false, e.For, n.heal)
		})
	case scenario.KindFailFsync:
		n := m.resolve(e.Target)
		if n == nil || !n.up {
			return false
		}
		m.disks[n.id-1].failFsync = true
		m.applyDisk(n)
		m.lasting(fmt.Sprintf("fail-fsync-%s", n.name), false, failFsyncWindowMax, func() {
			m.disks[n.id-1].failFsync = false
			m.applyDisk(n)
		})
	}
	return true
}

// nodeHalted is told when a node halted: a failed fsync did its work, so
// the node's next process syncs normally again.
func (m *nemesis) nodeHalted(n *node) {
	if m.disks[n.id-1].failFsync {
		m.disks[n.id-1].failFsync = false
		m.applyDisk(n)
	}
}

func (m *nemesis) applyDiskFault(e scenario.Event) bool {
	n := m.resolve(e.Target)
	if n == nil {
		return false
	}
	state := &m.disks[n.id-1]
	switch e.Kind {
	case scenario.KindSlowDisk:
		if state.slow {
			return false
		}
		state.slow, state.slowMin, state.slowMax = true, e.SyncMin, e.SyncMax
		m.lasting(fmt.Sprintf("slow-disk-%s", n.name), false, e.For, func() {
			state.slow = false
			m.applyDisk(n)
		})
	case scenario.KindFullDisk:
		if state.capacity > 0 {
			return false
		}
		state.capacity = n.machine.Disk.Usage() + m.rng.Int64N(fullDiskHeadroomBytesMax+1)
		m.lasting(fmt.Sprintf("full-disk-%s", n.name), false, e.For, func() {
			state.capacity = 0
			m.applyDisk(n)
		})
	}
	m.applyDisk(n)
	return true
}

// applyDisk sets a node's disk faults: the scenario's, changed by what the
// nemesis does to it now.
func (m *nemesis) applyDisk(n *node) {
	faults := m.run.baseDisk()
	state := m.disks[n.id-1]
	if state.slow {
		faults.SyncLatencyMin, faults.SyncLatencyMax = state.slowMin, state.slowMax
	}
	faults.CapacityBytes = state.capacity
	if state.failFsync {
		faults.SyncFailure = 1
	}
	n.machine.Disk.SetFaults(faults)
}

func (m *nemesis) applyClockFault(e scenario.Event) bool {
	n := m.resolve(e.Target)
	if n == nil {
		return false
	}
	clock := n.machine.Clock
	switch e.Kind {
	case scenario.KindClockJump:
		m.run.note(fmt.Sprintf("clock of %s jumps by %v", n.name, e.By))
		m.run.recordFault(sim.EventFault, fmt.Sprintf("clock-jump-%s_by_%v", n.name, e.By))
		clock.Jump(e.By)
	case scenario.KindClockDrift:
		clock.SetRate(e.Rate)
		base := m.run.scenario.ClockRates[n.id-1]
		m.lasting(fmt.Sprintf("clock-drift-%s", n.name), false, e.For, func() { clock.SetRate(base) })
	}
	return true
}

func (m *nemesis) applyClientFault(e scenario.Event) bool {
	r := m.run
	var c *simclient.Client
	if e.Client == "any" {
		if len(r.clients) == 0 {
			return false
		}
		c = r.clients[m.rng.IntN(len(r.clients))]
	} else {
		i := slices.IndexFunc(r.clients, func(c *simclient.Client) bool { return c.Name() == e.Client })
		if i < 0 {
			panic(fmt.Sprintf("clusterworkload: the schedule crashes client %q, which the run does not have", e.Client))
		}
		c = r.clients[i]
	}
	if !c.Alive() || c.Process().Suspended() {
		return false
	}
	if e.Kind == scenario.KindClientPause {
		process := c.Process()
		r.kernel.Suspend(process)
		m.lasting("client-pause-"+c.Name(), false, e.For, func() { r.kernel.Resume(process) })
		return true
	}
	c.Crash()
	m.lasting("client-crash-"+c.Name(), false, e.For, c.Restart)
	return true
}
