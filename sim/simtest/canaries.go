package simtest

import (
	"testing"

	"sluice/sim"
)

// Catch is what a canary search found.
type Catch struct {
	// Seed is the first seed that failed, 0 for none.
	Seed uint64
	// Result is that seed's result.
	Result sim.Result
	// Searched is how many seeds ran, from seed 1; Failed how many of
	// them failed.
	Searched, Failed int
}

// FirstCatch runs seeds 1..seeds with the planted bug canary switched on
// and returns the first that fails. With all set it runs every seed and
// counts how many fail, which is how a canary's SeedsMax is chosen;
// otherwise it stops at the first.
func FirstCatch(newWorkload func() sim.Workload, canary string, seeds int, all bool) Catch {
	options := sim.RunOptions{Canaries: []string{canary}}
	var c Catch
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		r := newWorkload().Run(seed, options)
		c.Searched++
		if r.Passed() {
			continue
		}
		c.Failed++
		if c.Seed == 0 {
			c.Seed, c.Result = seed, r
			if !all {
				break
			}
		}
	}
	return c
}

// Log records a catch in the test's log.
func (c Catch) Log(t testing.TB) {
	t.Helper()
	t.Logf("first caught by seed %d (check=%s); caught by %d of seeds 1-%d", c.Seed, c.Result.Check, c.Failed, c.Searched)
}
