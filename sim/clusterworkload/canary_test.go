package clusterworkload

import (
	"os"
	"strconv"
	"testing"

	"sluice/sim"
	"sluice/sim/scenario"
	"sluice/sim/simtest"
)

// TestCanariesAreCaught runs each planted bug from seed 1 and requires a
// failure within its SeedsMax seeds. The seed that catches it must pass
// with the same scenario and the bug switched off: the catch is the bug's,
// not the scenario's. With MEASURE set it runs the first MEASURE seeds
// and logs how many catch it, which is how SeedsMax was chosen.
func TestCanariesAreCaught(t *testing.T) {
	for _, canary := range Canaries() {
		t.Run(canary.Name, func(t *testing.T) {
			t.Parallel()
			seeds := canary.SeedsMax
			measure, _ := strconv.Atoi(os.Getenv("MEASURE"))
			if measure > 0 {
				seeds = measure
			}
			catching := func() sim.Workload { return canary.CatchingWorkload(newWorkload()) }
			catch := simtest.FirstCatch(catching, canary.Name, seeds, measure > 0)
			if catch.Seed == 0 {
				t.Fatalf("%s survived seeds 1-%d", canary.Name, seeds)
			}
			if catch.Seed > uint64(canary.SeedsMax) {
				t.Fatalf("%s first caught by seed %d, beyond its SeedsMax %d", canary.Name, catch.Seed, canary.SeedsMax)
			}
			if canary.Twice {
				// Caught by the second run alone: one run, bug on, passes.
				if catch.Result.Check != sim.CheckNondeterministic {
					t.Fatalf("%s, caught twice, failed %q, want %q", canary.Name, catch.Result.Check, sim.CheckNondeterministic)
				}
				if once := newWorkload().Run(catch.Seed, sim.RunOptions{Canaries: []string{canary.Name}}); !once.Passed() {
					t.Fatalf("one run of seed %d with %s on fails, where only a second should tell:\n%s", catch.Seed, canary.Name, once.Line())
				}
			}
			drawn := biased(scenario.Draw(catch.Seed), []string{canary.Name})
			clean := canary.CatchingWorkload(scenarioWorkload{drawn}).Run(catch.Seed, sim.RunOptions{})
			if !clean.Passed() {
				t.Fatalf("seed %d catches %s, but fails without it too:\n%s", catch.Seed, canary.Name, clean.Line())
			}
			catch.Log(t)
		})
	}
}

// scenarioWorkload runs one scenario whatever the seed: the catching
// seed's, with the bug off, run as the canary's catching runs were.
type scenarioWorkload struct{ s scenario.Scenario }

func (w scenarioWorkload) Name() string { return Name }
func (w scenarioWorkload) Run(_ uint64, options sim.RunOptions) sim.Result {
	return RunScenario(w.s, options)
}
