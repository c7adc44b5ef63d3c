package simtest

import (
	"testing"

	"sluice/sim"
)

// SlowLinkRun is what SlowLinksComeAndGo needs to know of one run: its
// result, whether its seed drew slow links, how many windows it opened,
// and the hosts still on slow links when it ended.
type SlowLinkRun struct {
	Result    sim.Result
	Drawn     bool
	Slowed    int
	StillSlow []string
}

// SlowLinksComeAndGo runs seeds 1 to seeds and holds a workload's slow
// links to their promise: a seed that draws them slows links during the
// safety phase and every link is restored by the end; a seed that does
// not never slows one; every run passes; and some seed slowed a link.
func SlowLinksComeAndGo(t *testing.T, seeds uint64, run func(seed uint64) SlowLinkRun) {
	t.Helper()
	slowed := 0
	for seed := uint64(1); seed <= seeds; seed++ {
		r := run(seed)
		if !r.Result.Passed() {
			t.Fatalf("seed %d: %s", seed, r.Result.Line())
		}
		switch {
		case !r.Drawn && r.Slowed > 0:
			t.Fatalf("seed %d drew no slow links and slowed %d", seed, r.Slowed)
		case len(r.StillSlow) > 0:
			t.Fatalf("seed %d ended with %v still on slow links", seed, r.StillSlow)
		}
		slowed += r.Slowed
	}
	if slowed == 0 {
		t.Fatalf("no seed of %d slowed a link", seeds)
	}
}
