package brokerworkload

import (
	"sluice/sim"
	"sluice/sim/scenario"
)

// The broker workload's own fault kinds, where the cluster has none like
// them: the group nemesis's.
const (
	// faultCrashInRebalance is a broker crash while the group rebalances
	// (it is a crash too).
	faultCrashInRebalance = "crash-in-rebalance"
	// faultConsumerLeave is a consumer leaving its group and rejoining.
	faultConsumerLeave = "consumer-leave"
	// faultConsumerStall is a consumer frozen, at times past its session.
	faultConsumerStall = "consumer-stall"
)

// coverage counts what the run reached, for a sweep's coverage line: the
// faults the nemesis applied, named as the cluster's fault kinds are where
// they are the same, the disk's own faults its seeds draw chances for, and
// what the broker's BUGGIFY sites did, of those one broker can reach.
func (r *run) coverage() *sim.Coverage {
	faults := []string{
		string(scenario.KindCrash), faultCrashInRebalance, string(scenario.KindReset),
		string(scenario.KindClientCrash), string(scenario.KindFullDisk), string(scenario.KindSlowDisk),
		faultConsumerLeave, faultConsumerStall, slowNetKind,
	}
	c := sim.NewCoverage(append(faults, sim.DiskFaults()...), reachableSites())
	if r.node != nil {
		// Every broker crash: the nemesis's, under load or not, and
		// those in a rebalance.
		c.CountFault(string(scenario.KindCrash), r.node.crashes)
		c.CountDisk(r.node.machine.Disk.Stats())
		c.CountSites(r.node.machine.Buggify())
	}
	c.CountFault(faultCrashInRebalance, r.counts.crashesInRebalance)
	c.CountFault(string(scenario.KindReset), r.counts.resets)
	c.CountFault(slowNetKind, r.counts.slowLinks)
	c.CountFault(string(scenario.KindClientCrash), r.counts.clientCrashes)
	c.CountFault(string(scenario.KindFullDisk), r.counts.fullDiskWindows)
	c.CountFault(string(scenario.KindSlowDisk), r.counts.slowDiskWindows)
	c.CountFault(faultConsumerLeave, r.counts.consumerLeaves)
	c.CountFault(faultConsumerStall, r.counts.consumerStalls)
	return c
}
