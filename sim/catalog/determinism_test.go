package catalog

import (
	"strings"
	"sync"
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

// TestSeedsRunAtOnceShareNothing runs seeds of every workload at once, on
// goroutines sharing one workload value as a sweep's workers do, and
// requires each to replay as it runs alone: a run must keep all its state
// to itself. Under the race detector (make test-race) it also reports any
// state two runs touch.
func TestSeedsRunAtOnceShareNothing(t *testing.T) {
	const seeds = 4
	for _, name := range WorkloadNames() {
		t.Run(name, func(t *testing.T) {
			w, _ := Workload(name)
			alone := make([]sim.Result, seeds)
			for i := range alone {
				alone[i] = w.Run(uint64(i+1), sim.RunOptions{})
			}
			together := make([]sim.Result, seeds)
			var running sync.WaitGroup
			for i := range together {
				running.Go(func() { together[i] = w.Run(uint64(i+1), sim.RunOptions{}) })
			}
			running.Wait()
			for i := range together {
				if together[i].Line() != alone[i].Line() {
					t.Errorf("seed %d of %s ran differently beside other seeds:\nalone:    %s\ntogether: %s", i+1, name, alone[i].Line(), together[i].Line())
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
