package simtest

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"sluice/sim"
)

// workers is how many goroutines RunSeeds spreads seeds over: the
// machine's two cores. Each seed stays single-threaded.
const workers = 2

// RunSeeds runs seeds [first, first+count) of fresh workloads from
// newWorkload, split over parallel subtests, and hands each result to
// judge.
func RunSeeds(t *testing.T, newWorkload func() sim.Workload, first, count uint64, options sim.RunOptions, judge func(t *testing.T, r sim.Result)) {
	t.Helper()
	for worker := range uint64(workers) {
		t.Run(fmt.Sprintf("group%d", worker), func(t *testing.T) {
			t.Parallel()
			for seed := first + worker; seed < first+count; seed += workers {
				judge(t, newWorkload().Run(seed, options))
			}
		})
	}
}

// SameSeedSameResult runs each seed twice and requires the same result
// down to the trace hash, a non-empty trace, and different traces for
// seeds 1 and 2 (a hash that ignored the run would pass the rest).
func SameSeedSameResult(t *testing.T, newWorkload func() sim.Workload, seeds ...uint64) {
	t.Helper()
	for _, seed := range seeds {
		first, second := newWorkload().Run(seed, sim.RunOptions{}), newWorkload().Run(seed, sim.RunOptions{})
		if diff := cmp.Diff(first, second); diff != "" {
			t.Fatalf("seed %d ran differently twice (-first +second):\n%s", seed, diff)
		}
		if first.TraceHash == "" || first.Steps == 0 {
			t.Fatalf("seed %d: empty trace", seed)
		}
	}
	if a, b := newWorkload().Run(1, sim.RunOptions{}), newWorkload().Run(2, sim.RunOptions{}); a.TraceHash == b.TraceHash {
		t.Fatalf("seeds 1 and 2 have the same trace hash %s", a.TraceHash)
	}
}

// Stat is one of a result's integer stats; a stat the result does not
// list fails the test, since every caller names one its workload reports.
func Stat(t testing.TB, r sim.Result, name string) int64 {
	t.Helper()
	value, listed := r.Stat(name)
	if !listed {
		t.Fatalf("seed %d reports no stat %s", r.Seed, name)
	}
	return value
}
