package brokerworkload

import (
	"testing"

	"sluice/core/group"
	"sluice/sim/simtest"
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
			catch := simtest.FirstCatch(newWorkload, canary.Name, canary.SeedsMax, !testing.Short())
			if catch.Seed == 0 {
				t.Fatalf("%s survived seeds 1-%d", canary.Name, canary.SeedsMax)
			}
			if want, named := caughtBy[canary.Name]; named && catch.Result.Check != want {
				t.Fatalf("%s first caught by seed %d with check %s, want %s:\n%s", canary.Name, catch.Seed, catch.Result.Check, want, catch.Result.Line())
			}
			catch.Log(t)
		})
	}
}
