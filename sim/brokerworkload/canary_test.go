package brokerworkload

import (
	"testing"

	"sluice/core/group"
	"sluice/sim"
)

// caughtBy names the check each planted bug must be caught by, where it
// matters which: the group canaries each have a check written for them.
var caughtBy = map[string]string{
	group.CanaryStaleGenerationCommit: "stale-generation-commit",
	group.CanaryCommitBeforeDurable:   "nonlinearizable-committed-offset",
}

// TestCanariesAreCaught runs each planted bug from seed 1 and requires a
// failure within its SeedsMax seeds. It logs the first catching seed and,
// outside -short, how many of the first SeedsMax seeds catch it, which is
// how SeedsMax was chosen.
func TestCanariesAreCaught(t *testing.T) {
	for _, canary := range Canaries() {
		t.Run(canary.Name, func(t *testing.T) {
			t.Parallel()
			options := sim.RunOptions{Canaries: []string{canary.Name}}
			caught, first := 0, uint64(0)
			var firstResult sim.Result
			for seed := uint64(1); seed <= uint64(canary.SeedsMax); seed++ {
				r := New().Run(seed, options)
				if r.Passed() {
					continue
				}
				caught++
				if first == 0 {
					first, firstResult = seed, r
					if testing.Short() {
						break
					}
				}
			}
			if first == 0 {
				t.Fatalf("%s survived seeds 1-%d", canary.Name, canary.SeedsMax)
			}
			if want, named := caughtBy[canary.Name]; named && firstResult.Check != want {
				t.Fatalf("%s first caught by seed %d with check %s, want %s:\n%s", canary.Name, first, firstResult.Check, want, firstResult.Line())
			}
			t.Logf("first caught by seed %d (check=%s); caught by %d of seeds 1-%d", first, firstResult.Check, caught, canary.SeedsMax)
		})
	}
}
