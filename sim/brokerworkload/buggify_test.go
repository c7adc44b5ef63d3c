package brokerworkload

import (
	"slices"
	"testing"

	"sluice/core"
	"sluice/sim"
)

// buggifySeedsOnMax bounds how many seeds with BUGGIFY drawn on the test
// runs before every site has fired: a site is switched on or off at its
// first reach in a run, by a chance the seed draws, so which of a few
// seeds fire a rarely enabled site moves whenever their runs do.
const buggifySeedsOnMax = 40

// TestBuggifyReachesAndFiresTheBrokerSites runs seeds that draw BUGGIFY
// on until every site one broker can reach has been reached and has
// fired: their result lines print the chances drawn, and the seeds that
// draw it off print 0/0 and count no site.
func TestBuggifyReachesAndFiresTheBrokerSites(t *testing.T) {
	want := []string{
		core.BuggifyBrokerFetchWaitShort, core.BuggifyGroupSessionShort, core.BuggifyLogReadSmallChunks,
		core.BuggifyLogSyncDelayed, core.BuggifyQuorumElectionTimeoutShortest,
	}
	allFired := func(on *sim.Coverage) bool {
		for _, site := range want {
			if on.SitesReached[site] == 0 || on.SitesFired[site] == 0 {
				return false
			}
		}
		return true
	}
	on := sim.NewCoverage(nil, nil)
	seedsOn := 0
	for seed := uint64(1); seedsOn < buggifySeedsOnMax && (seedsOn == 0 || !allFired(on)); seed++ {
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
	t.Logf("%d seeds with BUGGIFY on", seedsOn)
	if !slices.Equal(on.KnownSites, want) {
		t.Fatalf("sites %v; want %v, the ones one broker can reach", on.KnownSites, want)
	}
	for _, site := range want {
		if on.SitesReached[site] == 0 || on.SitesFired[site] == 0 {
			t.Errorf("%s reached %d times, fired %d, in %d seeds with BUGGIFY on; want both above zero",
				site, on.SitesReached[site], on.SitesFired[site], seedsOn)
		}
	}
}
