package catalog

import (
	"strings"
	"testing"

	"sluice/sim"
)

// determinismSeeds is how many seeds of each workload run twice: enough to
// cover most fault kinds and BUGGIFY sites (60 cluster seeds reach every
// drawn kind), few enough for make test. The broker workload's seeds take
// several times longer than the others', so it runs fewer.
const (
	determinismSeeds       = 60
	determinismBrokerSeeds = 30
)

// TestEveryWorkloadIsDeterministic runs seeds of every workload twice and
// requires the same trace hash and the same result line: a seed that
// replays differently is as serious a bug as lost data (DESIGN.md §1.4).
func TestEveryWorkloadIsDeterministic(t *testing.T) {
	for _, name := range WorkloadNames() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			seeds := uint64(determinismSeeds)
			if name == "broker" {
				seeds = determinismBrokerSeeds
			}
			if testing.Short() {
				seeds = 5
			}
			w, _ := Workload(name)
			for seed := uint64(1); seed <= seeds; seed++ {
				if r := sim.Twice(w).Run(seed, sim.RunOptions{}); r.Check == sim.CheckNondeterministic {
					t.Fatalf("seed %d of %s differs between two runs: %s\n%s", seed, name, r.Detail, partingOf(w, seed))
				}
			}
		})
	}
}

// partingOf runs a seed twice more, as `sluice sim --determinism` does,
// and says where the runs part (nondeterminism may not show every time).
func partingOf(w sim.Workload, seed uint64) string {
	_, divergence := sim.RunTwice(func(o sim.RunOptions) sim.Result { return w.Run(seed, o) }, sim.RunOptions{})
	if divergence == nil {
		return "two more runs, their traces as text, agreed"
	}
	var b strings.Builder
	divergence.Write(&b)
	return b.String()
}
