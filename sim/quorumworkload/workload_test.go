package quorumworkload

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"sluice/sim"
)

// seedsToRun is how many seeds TestSeedsPass runs, from seed 1; -short
// runs seedsToRunShort. The command line sweeps far more
// (`sluice sim --workload quorum --seeds 1-10000`).
const (
	seedsToRun      = 300
	seedsToRunShort = 30
)

// runSeeds runs seeds [first, first+count) on two goroutines' worth of
// subtests, each seed single-threaded as always.
func runSeeds(t *testing.T, first, count uint64, options sim.RunOptions, judge func(t *testing.T, r sim.Result)) {
	t.Helper()
	const groups = 2
	for group := range uint64(groups) {
		t.Run(fmt.Sprintf("group%d", group), func(t *testing.T) {
			t.Parallel()
			for seed := first + group; seed < first+count; seed += groups {
				judge(t, New().Run(seed, options))
			}
		})
	}
}

func TestSeedsPass(t *testing.T) {
	count := uint64(seedsToRun)
	if testing.Short() {
		count = seedsToRunShort
	}
	runSeeds(t, 1, count, sim.RunOptions{}, func(t *testing.T, r sim.Result) {
		if !r.Passed() {
			t.Errorf("%s\nreplay: go run ./cmd/sluice sim --workload quorum --seed %d --trace", r.Line(), r.Seed)
		}
		if stat(r, "acked") < ackedMin {
			t.Errorf("seed %d acknowledged only %d proposals, want at least %d", r.Seed, stat(r, "acked"), ackedMin)
		}
	})
}

// ackedMin is the fewest acknowledged proposals a run must have to count
// as a test of anything: the liveness and final phases alone make six.
const ackedMin = 6

func TestSameSeedSameResult(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		first, second := New().Run(seed, sim.RunOptions{}), New().Run(seed, sim.RunOptions{})
		if diff := cmp.Diff(first, second); diff != "" {
			t.Fatalf("seed %d ran differently twice (-first +second):\n%s", seed, diff)
		}
		if first.TraceHash == "" || first.Steps == 0 {
			t.Fatalf("seed %d: empty trace", seed)
		}
	}
	if a, b := New().Run(1, sim.RunOptions{}), New().Run(2, sim.RunOptions{}); a.TraceHash == b.TraceHash {
		t.Fatal("seeds 1 and 2 have the same trace hash")
	}
}

// The checks themselves must be able to fail: a run whose history is
// doctored fails the check that covers it.
func TestChecksCatchDoctoredHistories(t *testing.T) {
	cases := []struct {
		check  string
		doctor func(r *run)
	}{
		{"leaders", func(r *run) { r.checker.leading(1, 1); r.checker.leading(1, 2) }},
		{"agreement", func(r *run) {
			r.checker.committed(5, "x", "a test")
			r.checker.committed(5, "y", "a test")
		}},
		{"agreement", func(r *run) {
			r.checker.committed(5, "x", "a test")
			r.checker.committed(6, "x", "a test")
		}},
		{"order", func(r *run) {
			r.checker.committed(5, "x", "a test")
			r.checker.committed(6, "y", "a test")
			s := newStateMachine(r, 1, 1)
			s.entries = []entry{{offset: 6, value: "y"}}
			r.states = append(r.states, s)
			r.checker.checkStates()
		}},
	}
	for _, tc := range cases {
		r := &run{}
		r.kernel = nil
		r.checker = newChecker(r)
		r.violation = nil
		func() {
			defer func() { recover() }() // note() has no kernel here
			tc.doctor(r)
		}()
		if r.violation == nil || r.violation.check != tc.check {
			t.Errorf("want a %q violation, got %+v", tc.check, r.violation)
		}
	}
}

// stat reads one of a result's integer stats.
func stat(r sim.Result, name string) int {
	value, listed := r.Stat(name)
	if !listed {
		panic("no stat " + name)
	}
	return int(value)
}
