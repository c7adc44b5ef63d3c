package clusterworkload

import "sluice/sim/scenario"

// ScenarioOf is the scenario Run simulates for a seed with the given
// planted bugs on: the seed's draw, leaned toward the faults that expose
// them (bias.go), or with none, toward its profile if it has one
// (profiles.go). Tools that rework a seed's run (sim/shrink) start here,
// so they begin from exactly the run that failed.
func ScenarioOf(seed uint64, canaries []string) scenario.Scenario {
	return drawn(seed, canaries, "")
}

// ScenarioLeaningTo is the scenario Run simulates for a seed with
// RunOptions.Profile set to profile (one of Profiles) and no planted bug.
func ScenarioLeaningTo(seed uint64, profile string) scenario.Scenario {
	return drawn(seed, nil, profile)
}
