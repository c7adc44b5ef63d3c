package brokerworkload

import (
	"testing"

	"sluice/sim"
	"sluice/sim/simtest"
)

// A seed that draws slow links puts the broker or a client behind them
// during the safety phase and restores every link at the heal; a seed
// that does not draw them never slows a link. Every run still passes.
func TestSlowLinksComeAndGoInTheSeedsThatDrawThem(t *testing.T) {
	simtest.SlowLinksComeAndGo(t, 12, func(seed uint64) simtest.SlowLinkRun {
		result, r := runSeed(seed, sim.RunOptions{}, nil)
		return simtest.SlowLinkRun{Result: result, Drawn: r.slowLinks.Mean != 0, Slowed: r.counts.slowLinks, StillSlow: r.network.SlowHosts()}
	})
}
