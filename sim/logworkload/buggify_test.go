package logworkload

import (
	"testing"

	"sluice/core"
	"sluice/sim"
)

// buggifySeedsOn is how many seeds with BUGGIFY drawn on the test sums.
const buggifySeedsOn = 20

// TestBuggifyReachesAndFiresTheLogSites runs a short sweep of seeds that
// draw BUGGIFY on: their result lines print the chances drawn, and
// core/log's sites are reached and fire, while the seeds that draw it off
// print 0/0 and count no site.
func TestBuggifyReachesAndFiresTheLogSites(t *testing.T) {
	on := sim.NewCoverage(nil, nil)
	seedsOn := 0
	for seed := uint64(1); seedsOn < buggifySeedsOn; seed++ {
		b := sim.DrawBuggifyChances(seed)
		r := New().Run(seed, sim.RunOptions{})
		if !r.Passed() {
			t.Fatalf("seed %d failed: %s", seed, r.Line())
		}
		if got, _ := r.Option("buggify"); got != b.Option().Value {
			t.Fatalf("seed %d prints buggify=%s, drew %s", seed, got, b.Option().Value)
		}
		if b.Enable <= 0 || b.Fire <= 0 {
			if len(r.Coverage.SitesReached) != 0 {
				t.Fatalf("seed %d drew BUGGIFY off, yet reached %v", seed, r.Coverage.SitesReached)
			}
			continue
		}
		seedsOn++
		on.Add(r.Coverage)
	}
	for _, site := range []string{core.BuggifyLogReadSmallChunks, core.BuggifyLogSyncDelayed} {
		if on.SitesReached[site] == 0 || on.SitesFired[site] == 0 {
			t.Errorf("%s reached %d times, fired %d, in %d seeds with BUGGIFY on; want both above zero",
				site, on.SitesReached[site], on.SitesFired[site], buggifySeedsOn)
		}
	}
}
