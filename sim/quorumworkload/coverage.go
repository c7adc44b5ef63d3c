package quorumworkload

import (
	"sluice/sim"
	"sluice/sim/scenario"
)

// What this workload can reach, for a sweep's coverage line: the faults
// its nemesis applies, named as the cluster's fault kinds are (each
// partition shape by its own kind; a random split of the nodes is a
// partition), the disk's own faults its seeds draw chances for, and the
// sites of the core packages a voter runs: the quorum, on the log.
func newCoverage() *sim.Coverage {
	faults := []string{
		string(scenario.KindCrash), string(scenario.KindPowerLoss), string(scenario.KindPause),
		string(scenario.KindIsolate), string(scenario.KindCutFrom), string(scenario.KindCutTo),
		string(scenario.KindBridge), string(scenario.KindPartition),
		string(scenario.KindClockJump), string(scenario.KindFullDisk), string(scenario.KindSlowDisk),
		string(scenario.KindSlowNet),
		faultCrashAfterVote,
	}
	return sim.NewCoverage(append(faults, sim.DiskFaults()...), sim.BuggifySitesIn("quorum", "log"))
}

// applied counts one fault of a kind the nemesis applied.
func (r *run) applied(kind scenario.Kind) { r.coverage.CountFault(string(kind), 1) }

// appliedSplit counts a split of the nodes, when it cut something: the
// nemesis draws its sides, and one may come out empty.
func (r *run) appliedSplit(kind scenario.Kind, left, right []string) {
	if len(left) > 0 && len(right) > 0 {
		r.applied(kind)
	}
}

// finishCoverage adds what every node's disk and BUGGIFY sites did.
func (r *run) finishCoverage() *sim.Coverage {
	for _, n := range r.nodes {
		r.coverage.CountDisk(n.machine.Disk.Stats())
		r.coverage.CountSites(n.machine.Buggify())
	}
	return r.coverage
}
