package clusterworkload

import (
	"fmt"
	"slices"

	"sluice/sim/kernel"
	"sluice/sim/scenario"
)

// A fifth of the seeds a sweep runs without a planted bug lean the way one
// canary's runs lean (bias.go), drawn per seed: tiny segments under steady
// writes and slowed followers, power losses with slow syncs, stranded
// coordinators, zombie consumers, frequent elections. Those are the
// regions where the planted bugs needed to be looked for, and real ones
// hide there too: a log beginning a sync round over another
// (scenarios/regressions/cluster-panic-log-round-overlap-14.txt) showed
// only in the retention canary's region, which the plain draw almost never
// reaches. The profile comes from its own stream of the seed, so the draw
// itself is unchanged; the result line names it (profile=...).

// profileChance is the chance that a seed's draw takes a profile.
const profileChance = 0.2

// profiled returns the seed's draw, leaned toward a profile for a fifth of
// the seeds.
func profiled(s scenario.Scenario, seed uint64) scenario.Scenario {
	rng := kernel.NewRand(seed, "scenario/profile")
	if rng.Float64() >= profileChance {
		return s
	}
	return leanedTo(s, profileNames()[rng.IntN(len(canaryBiases))])
}

// Profiles lists the profiles a sweep may lean toward (RunOptions.Profile):
// the names of the canaries whose runs lean some way.
func Profiles() []string { return profileNames() }

// profileNames lists the profiles in a fixed order.
func profileNames() []string {
	names := make([]string, 0, len(canaryBiases))
	for name := range canaryBiases {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// drawn is the scenario Run simulates for a seed: with planted bugs on,
// the draw leaned toward what exposes them; without, leaned toward the
// profile asked for, or, with none asked for, possibly toward one drawn.
func drawn(seed uint64, canaries []string, profile string) scenario.Scenario {
	switch {
	case len(canaries) > 0:
		return biased(scenario.Draw(seed), canaries)
	case profile != "":
		return leanedTo(scenario.Draw(seed), profile)
	}
	return profiled(scenario.Draw(seed), seed)
}

// leanedTo leans a draw toward the named profile. An unknown name is a
// caller's bug: the command line checks it against Profiles.
func leanedTo(s scenario.Scenario, profile string) scenario.Scenario {
	bias, ok := canaryBiases[profile]
	if !ok {
		panic(fmt.Sprintf("clusterworkload: no profile %q", profile))
	}
	bias(&s)
	s.Profile = profile
	return s
}
