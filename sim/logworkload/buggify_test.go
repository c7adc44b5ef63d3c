package logworkload

import (
	"fmt"
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
	seedsOn, seedsOff := 0, 0
	for seed := uint64(1); seedsOn < buggifySeedsOn; seed++ {
		b := sim.DrawBuggifyChances(seed)
		r := New().Run(seed, sim.RunOptions{})
		if !r.Passed() {
			t.Fatalf("seed %d failed: %s", seed, r.Line())
		}
		want := fmt.Sprintf("%v/%v", b.Enable, b.Fire)
		if got := optionValue(r, "buggify"); got != want {
			t.Fatalf("seed %d prints buggify=%s, drew %s", seed, got, want)
		}
		if b.Enable <= 0 || b.Fire <= 0 {
			seedsOff++
			if len(r.Coverage.SitesReached) != 0 {
				t.Fatalf("seed %d drew BUGGIFY off, yet reached %v", seed, r.Coverage.SitesReached)
			}
			continue
		}
		if b.Enable > sim.BuggifyChanceDrawMax || b.Fire > sim.BuggifyChanceDrawMax {
			t.Fatalf("seed %d drew chances %v, above %v", seed, b, sim.BuggifyChanceDrawMax)
		}
		seedsOn++
		on.Add(r.Coverage)
	}
	if seedsOff == 0 {
		t.Errorf("every seed drew BUGGIFY on; about half should draw it off")
	}
	for _, site := range []string{core.BuggifyLogReadSmallChunks, core.BuggifyLogSyncDelayed} {
		if on.SitesReached[site] == 0 || on.SitesFired[site] == 0 {
			t.Errorf("%s reached %d times, fired %d, in %d seeds with BUGGIFY on; want both above zero",
				site, on.SitesReached[site], on.SitesFired[site], buggifySeedsOn)
		}
	}
}

func optionValue(r sim.Result, name string) string {
	for _, o := range r.Options {
		if o.Name == name {
			return o.Value
		}
	}
	return ""
}
