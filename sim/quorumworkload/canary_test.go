package quorumworkload

import (
	"testing"

	"sluice/sim"
)

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
			t.Logf("first caught by seed %d (check=%s); caught by %d of seeds 1-%d", first, firstResult.Check, caught, canary.SeedsMax)
		})
	}
}
