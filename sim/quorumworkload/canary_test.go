package quorumworkload

import (
	"testing"

	"sluice/sim/simtest"
)

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
			catch.Log(t)
		})
	}
}
