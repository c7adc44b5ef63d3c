package clusterworkload

import (
	"fmt"
	"time"

	"sluice/core"
	"sluice/core/group"
	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/scenario"
	"sluice/sim/simdisk"
)

// The nemesis applies the scenario's fault schedule. Each event is a
// kernel event of the world (owned by no process: a crash must not cancel
// the restart) at its time after the safety phase began. A fault that
// lasts is an active fault with an undo: its window's end runs the undo
// (a restart, a resume, the links healed, the disk back to normal), and
// so does the heal at the start of the liveness phase, which undoes every
// fault still active and brings every node and client up.
//
// Network faults overlap freely: each cut link counts the faults that cut
// it and heals only when the last of them ends, so ending one fault never
// ends another by accident.
type nemesis struct {
	run *run
	// rng is the nemesis's own stream: which node "any" is, headroom on
	// a full disk, a power loss's staggered restarts.
	rng     random
	stopped bool

	// active are the faults whose undo has not run, oldest first.
	active []*activeFault
	// cuts counts, per one-way link, the active faults cutting it.
	cuts map[link]int
	// disks are each node's disk faults on top of the scenario's.
	disks []diskState
}

// activeFault is a fault in force and how to end it.
type activeFault struct {
	label   string
	network bool
	undo    func()
	done    bool
}

// link is a one-way path between two hosts.
type link struct{ from, to string }

// diskState is what the nemesis does to one node's disk right now.
type diskState struct {
	slow             bool
	slowMin, slowMax time.Duration
	// capacity, when above zero, is a full disk's size.
	capacity  int64
	failFsync bool
}

// Bounds of the nemesis's own choices.
const (
	// fullDiskHeadroomBytesMax bounds the space a full disk leaves.
	fullDiskHeadroomBytesMax = 4 << 10
	// failFsyncWindowMax bounds how long a node's fsyncs keep failing
	// when it never syncs (it is down, say) and so never halts.
	failFsyncWindowMax = time.Second
)

func newNemesis(r *run) *nemesis {
	return &nemesis{
		run:   r,
		rng:   kernel.NewRand(r.scenario.Seed, "nemesis"),
		cuts:  map[link]int{},
		disks: make([]diskState, len(r.nodes)),
	}
}

// start schedules every event of the schedule, at its time after
// safetyStart.
func (m *nemesis) start(safetyStart int64) {
	k := m.run.kernel
	for _, e := range m.run.scenario.Schedule {
		delay := safetyStart + int64(e.At) - k.Now()
		k.Schedule(delay, nil, "nemesis."+string(e.Kind), func() {
			if !m.stopped && m.run.violation == nil {
				m.apply(e)
			}
		})
	}
}

// apply injects one event.
func (m *nemesis) apply(e scenario.Event) {
	r := m.run
	applied := false
	switch e.Kind {
	case scenario.KindCrash, scenario.KindPowerLoss, scenario.KindPause, scenario.KindFailFsync, scenario.KindShutdown:
		applied = m.applyProcessFault(e)
	case scenario.KindIsolate, scenario.KindCutFrom, scenario.KindCutTo, scenario.KindBridge,
		scenario.KindMinority, scenario.KindStrand, scenario.KindPartition, scenario.KindHeal, scenario.KindReset:
		applied = m.applyNetworkFault(e)
	case scenario.KindSlowNet:
		applied = m.applySlowNet(e)
	case scenario.KindClockJump, scenario.KindClockDrift:
		applied = m.applyClockFault(e)
	case scenario.KindSlowDisk, scenario.KindFullDisk:
		applied = m.applyDiskFault(e)
	case scenario.KindClientCrash, scenario.KindClientPause:
		applied = m.applyClientFault(e)
	case scenario.KindIdle:
		// A dropped fault's place (see scenario.KindIdle).
	default:
		panic(fmt.Sprintf("clusterworkload: the nemesis has no fault %q", e.Kind))
	}
	if applied {
		r.counts.faults[e.Kind]++
	}
}

// lasting registers an active fault; after d its undo runs, unless the
// heal ran it first. A zero d lasts until the heal.
func (m *nemesis) lasting(label string, network bool, d time.Duration, undo func()) {
	f := &activeFault{label: label, network: network, undo: undo}
	m.active = append(m.active, f)
	m.run.recordFault(sim.EventFaultStart, label)
	if d > 0 {
		m.run.kernel.Schedule(int64(d), nil, "nemesis.end-"+label, func() { m.end(f) })
	}
}

// end runs an active fault's undo once and forgets it.
func (m *nemesis) end(f *activeFault) {
	if f.done {
		return
	}
	f.done = true
	for i, g := range m.active {
		if g == f {
			m.active = append(m.active[:i], m.active[i+1:]...)
			break
		}
	}
	m.run.note("end " + f.label)
	m.run.recordFault(sim.EventFaultEnd, f.label)
	f.undo()
}

// healAll ends every fault for the liveness phase: every active fault
// undone, the network whole, every disk on its benign settings (the
// scenario's sync latencies, nothing failing), every node and client up.
// Clock drift the scenario gives a node stays: it is not a fault.
func (m *nemesis) healAll() {
	m.stopped = true
	for len(m.active) > 0 {
		m.end(m.active[0])
	}
	m.run.network.Heal()
	clear(m.cuts)
	d := m.run.scenario.Disk
	for i, n := range m.run.nodes {
		m.disks[i] = diskState{}
		n.machine.Disk.SetFaults(simdisk.Faults{SyncLatencyMin: d.SyncLatencyMin, SyncLatencyMax: d.SyncLatencyMax})
		n.heal()
		// A coordinator that judges sessions by a third of their
		// length expires members that heartbeat on time: a fault on
		// the group's liveness, healed with the rest. (A cooperative
		// group of three, each rebalance restarting every session,
		// never settled under it: seed 20869.)
		n.machine.Buggify().Quiet(core.BuggifyGroupSessionShort)
	}
	for _, c := range m.run.clients {
		c.Restart()
	}
}

// resolve finds the node a target names when the event fires: a leader
// or the controller as the observer last saw them, if up, else a node
// drawn among those up. It returns nil when no node is up.
func (m *nemesis) resolve(t scenario.Target) *node {
	r := m.run
	var chosen *node
	switch t.Role {
	case scenario.RoleNode:
		return r.nodes[t.Node-1]
	case scenario.RoleLeader:
		if l, known := r.observer.partitionLeader[fmt.Sprintf("%s-%d", t.Topic, t.Partition)]; known {
			chosen = r.nodes[l.node-1]
		}
	case scenario.RoleController:
		if l := r.observer.controller; l.node > 0 {
			chosen = r.nodes[l.node-1]
		}
	case scenario.RoleCoordinator:
		g := r.scenario.Clients.Groups[0].Name
		partition := fmt.Sprintf("%s-%d", scenario.OffsetsTopicName, group.PartitionFor(g, int32(r.scenario.Cluster.OffsetsPartitions)))
		if l, known := r.observer.partitionLeader[partition]; known {
			chosen = r.nodes[l.node-1]
		}
	}
	if chosen != nil && chosen.up {
		return chosen
	}
	var up []*node
	for _, n := range r.nodes {
		if n.up {
			up = append(up, n)
		}
	}
	if len(up) == 0 {
		return nil
	}
	return up[m.rng.IntN(len(up))]
}

// describe says what is still in force, for a liveness failure.
func (m *nemesis) describe() string {
	text := ""
	for _, f := range m.active {
		text += " active:" + f.label
	}
	return text
}
