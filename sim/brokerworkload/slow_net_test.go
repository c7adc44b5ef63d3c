package brokerworkload

import (
	"testing"

	"sluice/sim"
)

// A seed that draws slow links puts the broker or a client behind them
// during the safety phase and restores every link at the heal; a seed
// that does not draw them never slows a link. Every run still passes.
func TestSlowLinksComeAndGoInTheSeedsThatDrawThem(t *testing.T) {
	slowed := 0
	for seed := uint64(1); seed <= 12; seed++ {
		result, r := runSeed(seed, sim.RunOptions{}, nil)
		if !result.Passed() {
			t.Fatalf("seed %d: %s", seed, result.Line())
		}
		switch {
		case r.slowLinks.Mean == 0 && r.counts.slowLinks > 0:
			t.Fatalf("seed %d drew no slow links and slowed %d", seed, r.counts.slowLinks)
		case len(r.network.SlowHosts()) > 0:
			t.Fatalf("seed %d ended with %v still on slow links", seed, r.network.SlowHosts())
		}
		slowed += r.counts.slowLinks
	}
	if slowed == 0 {
		t.Fatal("no seed of 12 slowed a link")
	}
}
