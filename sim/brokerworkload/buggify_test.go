package brokerworkload

import (
	"slices"
	"testing"

	"sluice/core"
	"sluice/sim"
)

// buggifySeedsOn is how many seeds with BUGGIFY drawn on the test sums.
const buggifySeedsOn = 4

// TestBuggifyReachesAndFiresTheBrokerSites runs a short sweep of seeds
// that draw BUGGIFY on: their result lines print the chances drawn, and
// every site one broker can reach is reached and fires, while the seeds
// that draw it off print 0/0 and count no site.
func TestBuggifyReachesAndFiresTheBrokerSites(t *testing.T) {
	on := sim.NewCoverage(nil, nil)
	seedsOn := 0
	for seed := uint64(1); seedsOn < buggifySeedsOn; seed++ {
		b := sim.DrawBuggifyChances(seed)
		if b.Enable <= 0 || b.Fire <= 0 {
			// A seed drawn off costs a whole run; the coverage
			// test runs some of those.
			continue
		}
		r := New().Run(seed, sim.RunOptions{})
		if !r.Passed() {
			t.Fatalf("seed %d failed: %s", seed, r.Line())
		}
		if got, _ := r.Option("buggify"); got != b.Option().Value {
			t.Fatalf("seed %d prints buggify=%s, drew %s", seed, got, b.Option().Value)
		}
		seedsOn++
		on.Add(r.Coverage)
	}
	want := []string{
		core.BuggifyBrokerFetchWaitShort, core.BuggifyGroupSessionShort, core.BuggifyLogReadSmallChunks,
		core.BuggifyLogSyncDelayed, core.BuggifyQuorumElectionTimeoutShortest,
	}
	if !slices.Equal(on.KnownSites, want) {
		t.Fatalf("sites %v; want %v, the ones one broker can reach", on.KnownSites, want)
	}
	for _, site := range want {
		if on.SitesReached[site] == 0 || on.SitesFired[site] == 0 {
			t.Errorf("%s reached %d times, fired %d, in %d seeds with BUGGIFY on; want both above zero",
				site, on.SitesReached[site], on.SitesFired[site], buggifySeedsOn)
		}
	}
}
