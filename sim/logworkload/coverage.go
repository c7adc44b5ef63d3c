package logworkload

import (
	"sluice/sim"
	"sluice/sim/scenario"
)

// coverage counts what the run reached, for a sweep's coverage line: the
// crashes and full-disk windows the workload applied, named as the
// cluster's fault kinds are, and the disk's own faults its seeds draw
// chances for. The workload does not switch BUGGIFY on, so it knows no
// site.
func (r *run) coverage() *sim.Coverage {
	faults := []string{string(scenario.KindCrash), string(scenario.KindFullDisk)}
	c := sim.NewCoverage(append(faults, sim.DiskFaults()...), nil)
	c.CountFault(string(scenario.KindCrash), r.counts.crashes)
	c.CountFault(string(scenario.KindFullDisk), r.counts.fullDiskWindows)
	if r.machine != nil {
		c.CountDisk(r.machine.Disk.Stats())
	}
	return c
}
