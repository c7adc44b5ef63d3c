package logworkload

import (
	"sluice/sim"
	"sluice/sim/scenario"
)

// coverage counts what the run reached, for a sweep's coverage line: the
// crashes and full-disk windows the workload applied, named as the
// cluster's fault kinds are, and the disk's own faults its seeds draw
// chances for, and what core/log's BUGGIFY sites did, the only sites a
// log alone can reach.
func (r *run) coverage() *sim.Coverage {
	faults := []string{string(scenario.KindCrash), string(scenario.KindFullDisk)}
	c := sim.NewCoverage(append(faults, sim.DiskFaults()...), sim.BuggifySitesIn("log"))
	c.CountFault(string(scenario.KindCrash), r.counts.crashes)
	c.CountFault(string(scenario.KindFullDisk), r.counts.fullDiskWindows)
	if r.machine != nil {
		c.CountDisk(r.machine.Disk.Stats())
		c.CountSites(r.machine.Buggify())
	}
	return c
}
