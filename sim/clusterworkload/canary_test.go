package clusterworkload

import (
	"os"
	"strconv"
	"testing"

	"sluice/sim"
	"sluice/sim/scenario"
)

// TestCanariesAreCaught runs each planted bug from seed 1 and requires a
// failure within its SeedsMax seeds. The seed that catches it must pass
// with the same scenario and the bug switched off: the catch is the bug's,
// not the scenario's. Outside -short it logs how many of the first
// MEASURE seeds (default SeedsMax) catch it, which is how SeedsMax was
// chosen.
func TestCanariesAreCaught(t *testing.T) {
	for _, canary := range Canaries() {
		t.Run(canary.Name, func(t *testing.T) {
			t.Parallel()
			options := sim.RunOptions{Canaries: []string{canary.Name}}
			seeds := canary.SeedsMax
			if measure, _ := strconv.Atoi(os.Getenv("MEASURE")); measure > 0 {
				seeds = measure
			}
			caught, first := 0, uint64(0)
			var firstResult sim.Result
			for seed := uint64(1); seed <= uint64(seeds); seed++ {
				r := New().Run(seed, options)
				if r.Passed() {
					continue
				}
				caught++
				if first == 0 {
					first, firstResult = seed, r
					if os.Getenv("MEASURE") == "" {
						break
					}
				}
			}
			if first == 0 {
				t.Fatalf("%s survived seeds 1-%d", canary.Name, seeds)
			}
			if first > uint64(canary.SeedsMax) {
				t.Fatalf("%s first caught by seed %d, beyond its SeedsMax %d", canary.Name, first, canary.SeedsMax)
			}
			clean := RunScenario(biased(scenario.Draw(first), options.Canaries), sim.RunOptions{})
			if !clean.Passed() {
				t.Fatalf("seed %d catches %s, but fails without it too:\n%s", first, canary.Name, clean.Line())
			}
			t.Logf("first caught by seed %d (check=%s); caught by %d of seeds 1-%d", first, firstResult.Check, caught, seeds)
		})
	}
}
