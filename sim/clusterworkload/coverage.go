package clusterworkload

import (
	"slices"

	"sluice/core"
	"sluice/sim"
	"sluice/sim/scenario"
)

// coverage counts the faults the nemesis applied, by kind, and what every
// node's BUGGIFY sites did, for a sweep's "never reached" summary. The
// kinds it can reach are those the swarm draws, and any other a scenario
// file schedules; a node runs every core package, so it can reach every
// site.
func (r *run) coverage() *sim.Coverage {
	if r == nil {
		return nil
	}
	var kinds []string
	for _, kind := range scenario.Kinds() {
		if slices.Contains(scenario.DrawnKinds(), kind) || r.scenario.Has(kind) {
			kinds = append(kinds, string(kind))
		}
	}
	c := sim.NewCoverage(kinds, core.BuggifySites())
	for _, kind := range scenario.Kinds() {
		c.CountFault(string(kind), r.counts.faults[kind])
	}
	for _, n := range r.nodes {
		c.CountSites(n.machine.Buggify())
	}
	return c
}
