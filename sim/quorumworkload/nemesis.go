package quorumworkload

import (
	"fmt"
	"strings"
	"time"

	"sluice/sim"
	"sluice/sim/kernel"
	"sluice/sim/scenario"
	"sluice/sim/simdisk"
)

// The nemesis injects the faults a seed chose, each kind as a Poisson
// process of its own mean interval, as kernel events of the world (owned by
// no process: a crash must not cancel the restart). It stops at the end of
// the safety phase; heal undoes what lasts.
//
// Network faults (partitions and pauses) take turns: one at a time, each
// healed after a window, so that healing one never heals another by
// accident. A pause cannot stop a simulated process outright, so it is
// approximated: every link of the node is cut both ways (its traffic waits,
// as a stopped process's would, and moves again afterwards) and its clock
// runs twenty times slower (timers set meanwhile fire late, as a stalled
// process's would). Timers already set keep their times: a GC pause would
// delay those too.

// pauseClockRate is the clock rate of a paused node.
const pauseClockRate = 0.05

func (r *run) startNemesis() {
	s := r.settings
	stopped := func() bool { return r.faultsStopped }
	r.kernel.Every(r.nemesisRand, s.crashMean, "nemesis.crash", stopped, r.crashOne)
	r.kernel.Every(r.nemesisRand, s.powerLossMean, "nemesis.power-loss", stopped, r.powerLoss)
	r.kernel.Every(r.nemesisRand, s.pauseMean, "nemesis.pause", stopped, r.pause)
	r.kernel.Every(r.nemesisRand, s.partitionMean, "nemesis.partition", stopped, r.partition)
	r.kernel.Every(r.nemesisRand, s.clockJumpMean, "nemesis.clock-jump", stopped, r.clockJump)
	r.kernel.Every(r.nemesisRand, s.fullDiskMean, "nemesis.full-disk", stopped, r.fullDisk)
	r.kernel.Every(r.nemesisRand, s.slowDiskMean, "nemesis.slow-disk", stopped, r.slowDisk)
}

func (r *run) restartDelay() time.Duration {
	return kernel.Between(r.nemesisRand, 0, r.settings.restartMax)
}

func (r *run) window() time.Duration {
	return kernel.Between(r.nemesisRand, 0, r.settings.faultWindowMax)
}

// pick draws one node, the leader more often than not: faults that hit the
// leader are the interesting ones.
func (r *run) pick() *node {
	if leader := r.leader(); leader != nil && r.nemesisRand.IntN(2) == 0 {
		return leader
	}
	return r.nodes[r.nemesisRand.IntN(len(r.nodes))]
}

func (r *run) crashOne() {
	r.counts.crashes++
	r.applied(scenario.KindCrash)
	r.pick().crash(r.restartDelay())
}

// powerLoss crashes every node at once (see powerCycle).
func (r *run) powerLoss() {
	r.counts.powerLosses++
	r.applied(scenario.KindPowerLoss)
	r.powerCycle()
}

// powerCycle crashes every node at once. Half the time the power comes
// back everywhere at the same instant, so that every node starts its
// election timeout together and elections collide (split votes, two
// candidates in one epoch); otherwise each node comes back after its own
// delay.
func (r *run) powerCycle() {
	together := r.nemesisRand.IntN(2) == 0
	delay := r.restartDelay()
	r.note(fmt.Sprintf("power loss (back together: %v)", together))
	r.record(sim.EventFault, "power-loss", r.allNames(), fmt.Sprintf("power loss (back together: %v)", together))
	for _, n := range r.nodes {
		if !together {
			delay = r.restartDelay()
		}
		n.crash(delay)
	}
}

// pause stops one node for a window (see above).
func (r *run) pause() {
	if r.networkFault {
		return
	}
	n := r.pick()
	window := r.window()
	r.counts.pauses++
	r.applied(scenario.KindPause)
	r.networkFault = true
	r.note(fmt.Sprintf("pause %s for %v", n.name, window))
	label := "pause-" + n.name
	r.recording.FaultStart(r.now(), label, []string{n.name}, fmt.Sprintf("pause %s for %v", n.name, window))
	others := r.otherNames(n)
	r.network.Partition([]string{n.name}, others)
	n.machine.Clock.SetRate(pauseClockRate)
	r.kernel.Schedule(int64(window), nil, "nemesis.unpause", func() {
		r.recording.FaultEnd(r.now(), label)
		n.machine.Clock.SetRate(r.settings.clockRates[n.id-1])
		r.network.Heal()
		r.networkFault = false
	})
}

// partition cuts the network for a window: the leader isolated, a one-way
// cut around one node, a bridge (two sides that only one node joins), or a
// random split.
func (r *run) partition() {
	if r.networkFault {
		return
	}
	window := r.window()
	r.counts.partitions++
	r.networkFault = true
	n := r.pick()
	others := r.otherNames(n)
	label := ""
	switch kind := r.nemesisRand.IntN(4); kind {
	case 0:
		r.note(fmt.Sprintf("isolate %s for %v", n.name, window))
		label = "isolate-" + n.name
		r.applied(scenario.KindIsolate)
		r.network.Partition([]string{n.name}, others)
	case 1:
		r.note(fmt.Sprintf("one-way cut from %s for %v", n.name, window))
		label = "cut-from-" + n.name
		r.applied(scenario.KindCutFrom)
		for _, o := range others {
			r.network.Cut(n.name, o)
		}
	case 2:
		r.note(fmt.Sprintf("one-way cut to %s for %v", n.name, window))
		label = "cut-to-" + n.name
		r.applied(scenario.KindCutTo)
		for _, o := range others {
			r.network.Cut(o, n.name)
		}
	default:
		// Split the others in two. In a bridge, n is cut from neither
		// side, so it alone connects them; in a random split it is on
		// one side.
		var left, right []string
		for _, o := range others {
			if r.nemesisRand.IntN(2) == 0 {
				left = append(left, o)
			} else {
				right = append(right, o)
			}
		}
		if r.nemesisRand.IntN(2) == 0 {
			r.note(fmt.Sprintf("bridge %s between [%s] and [%s] for %v", n.name, strings.Join(left, " "), strings.Join(right, " "), window))
			label = fmt.Sprintf("bridge-%s-between-%s|%s", n.name, strings.Join(left, "+"), strings.Join(right, "+"))
			r.appliedSplit(scenario.KindBridge, left, right)
		} else {
			left = append(left, n.name)
			r.note(fmt.Sprintf("split [%s] | [%s] for %v", strings.Join(left, " "), strings.Join(right, " "), window))
			label = fmt.Sprintf("partition-%s|%s", strings.Join(left, "+"), strings.Join(right, "+"))
			r.appliedSplit(scenario.KindPartition, left, right)
		}
		r.network.Partition(left, right)
	}
	r.recording.FaultStart(r.now(), label, r.allNames(), fmt.Sprintf("%s for %v", label, window))
	r.kernel.Schedule(int64(window), nil, "nemesis.heal", func() {
		r.recording.FaultEnd(r.now(), label)
		r.network.Heal()
		r.networkFault = false
	})
}

// allNames lists every node, for a fault that concerns them all.
func (r *run) allNames() []string {
	names := make([]string, len(r.nodes))
	for i, n := range r.nodes {
		names[i] = n.name
	}
	return names
}

func (r *run) otherNames(n *node) []string {
	var names []string
	for _, o := range r.nodes {
		if o != n {
			names = append(names, o.name)
		}
	}
	return names
}

// clockJump moves one node's wall clock (an NTP step): monotonic time, which
// every timeout uses, is unaffected.
func (r *run) clockJump() {
	n := r.pick()
	d := time.Duration(r.nemesisRand.Int64N(int64(2*clockJumpMax)+1)) - clockJumpMax
	r.counts.clockJumps++
	r.applied(scenario.KindClockJump)
	r.record(sim.EventFault, "clock-jump-"+n.name, []string{n.name}, fmt.Sprintf("clock of %s jumps by %v", n.name, d))
	n.machine.Clock.Jump(d)
}

// fullDisk fills one node's disk for a window.
func (r *run) fullDisk() {
	n := r.pick()
	disk := n.machine.Disk
	faults := disk.Faults()
	if faults.CapacityBytes > 0 {
		return
	}
	faults.CapacityBytes = disk.Usage() + r.nemesisRand.Int64N(fullDiskHeadroomMax+1)
	disk.SetFaults(faults)
	window := r.window()
	r.counts.fullDisks++
	r.applied(scenario.KindFullDisk)
	r.note(fmt.Sprintf("disk of %s full for %v", n.name, window))
	full := "full-disk-" + n.name
	r.recording.FaultStart(r.now(), full, []string{n.name}, fmt.Sprintf("disk of %s full for %v", n.name, window))
	r.kernel.Schedule(int64(window), nil, "nemesis.disk-space", func() {
		r.recording.FaultEnd(r.now(), full)
		faults := disk.Faults()
		faults.CapacityBytes = 0
		disk.SetFaults(faults)
	})
}

// slowDisk makes one node's syncs slow for a window.
func (r *run) slowDisk() {
	n := r.pick()
	disk := n.machine.Disk
	faults := disk.Faults()
	faults.SyncLatencyMax = kernel.Between(r.nemesisRand, r.settings.disk.SyncLatencyMax, slowDiskLatencyMax)
	faults.SyncLatencyMin = faults.SyncLatencyMax / 2
	disk.SetFaults(faults)
	window := r.window()
	r.counts.slowDisks++
	r.applied(scenario.KindSlowDisk)
	r.note(fmt.Sprintf("disk of %s slow (%v) for %v", n.name, faults.SyncLatencyMax, window))
	slow := "slow-disk-" + n.name
	r.recording.FaultStart(r.now(), slow, []string{n.name}, fmt.Sprintf("disk of %s slow (%v) for %v", n.name, faults.SyncLatencyMax, window))
	r.kernel.Schedule(int64(window), nil, "nemesis.disk-speed", func() {
		r.recording.FaultEnd(r.now(), slow)
		faults := disk.Faults()
		faults.SyncLatencyMin, faults.SyncLatencyMax = r.settings.disk.SyncLatencyMin, r.settings.disk.SyncLatencyMax
		disk.SetFaults(faults)
	})
}

// heal ends every fault for the liveness phase: a good disk and clock, the
// network whole, every node up.
func (r *run) heal() {
	r.faultsStopped = true
	r.network.Heal()
	r.network.RestoreLinks()
	r.networkFault = false
	benign := simdisk.Faults{SyncLatencyMin: r.settings.disk.SyncLatencyMin, SyncLatencyMax: r.settings.disk.SyncLatencyMax}
	for _, n := range r.nodes {
		n.machine.Clock.SetRate(r.settings.clockRates[n.id-1])
		n.heal(benign)
	}
	r.recording.EndOpenFaults(r.now())
}
