package clusterworkload

import (
	"sluice/core"
	"sluice/sim"
	"sluice/sim/scenario"
)

// coverage counts the faults the nemesis applied, by kind, and what every
// node's BUGGIFY sites did, for a sweep's "never reached" summary.
func (r *run) coverage() *sim.Coverage {
	if r == nil {
		return nil
	}
	var kinds []string
	for _, kind := range scenario.Kinds() {
		kinds = append(kinds, string(kind))
	}
	c := sim.NewCoverage(kinds, core.BuggifySites())
	for _, kind := range scenario.Kinds() {
		if n := r.counts.faults[kind]; n > 0 {
			c.Faults[string(kind)] = uint64(n)
		}
	}
	for _, n := range r.nodes {
		for _, site := range n.machine.Buggify().Counts() {
			c.SitesReached[site.Site] += uint64(site.Reached)
			c.SitesFired[site.Site] += uint64(site.Fired)
		}
	}
	return c
}
