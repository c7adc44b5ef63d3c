package catalog

import (
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
				first, second := w.Run(seed, sim.RunOptions{}), w.Run(seed, sim.RunOptions{})
				if first.TraceHash != second.TraceHash || first.Line() != second.Line() {
					t.Fatalf("seed %d of %s differs between two runs:\n%s\n%s", seed, name, first.Line(), second.Line())
				}
			}
		})
	}
}
