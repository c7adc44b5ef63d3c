package clusterworkload

import (
	"testing"

	"sluice/sim"
)

// The swarm takes every operator and client action it declares within a
// short sweep: a chance drawn too low, or a path the workload stopped
// reaching (a static leader never told to skip the assignment), would
// otherwise show only as a "never reached" line nobody reads.
func TestASweepTakesEveryDeclaredAction(t *testing.T) {
	if testing.Short() {
		t.Skip("runs up to 300 seeds")
	}
	const seedsMax = 300
	sum := sim.NewCoverage(nil, nil)
	sum.DeclareActions(actions...)
	for seed := uint64(1); seed <= seedsMax; seed++ {
		r := New().Run(seed, sim.RunOptions{})
		if !r.Passed() {
			t.Fatalf("seed %d failed: %s", seed, r.Line())
		}
		sum.Add(r.Coverage)
		missing := false
		for _, a := range actions {
			missing = missing || sum.Actions[a] == 0
		}
		if !missing {
			t.Logf("every action taken by seed %d: %v", seed, sum.Actions)
			return
		}
	}
	t.Fatalf("after %d seeds some action was never taken: %v", seedsMax, sum.Actions)
}
