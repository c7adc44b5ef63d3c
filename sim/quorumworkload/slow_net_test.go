package quorumworkload

import (
	"testing"

	"sluice/sim"
	"sluice/sim/simtest"
)

// A seed that draws slow links puts nodes behind them during the safety
// phase and restores every link at the heal; a seed that does not draw
// them never slows a link. Every run still passes its checks.
func TestSlowLinksComeAndGoInTheSeedsThatDrawThem(t *testing.T) {
	simtest.SlowLinksComeAndGo(t, 40, func(seed uint64) simtest.SlowLinkRun {
		result, r := runSeed(seed, sim.RunOptions{}, nil)
		return simtest.SlowLinkRun{Result: result, Drawn: r.slowLinks.Mean != 0, Slowed: r.counts.slowLinks, StillSlow: r.network.SlowHosts()}
	})
}
