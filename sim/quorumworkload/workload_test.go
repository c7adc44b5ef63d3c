package quorumworkload

import (
	"testing"

	"sluice/sim"
	"sluice/sim/simtest"
)

// seedsToRun is how many seeds TestSeedsPass runs, from seed 1; -short
// runs seedsToRunShort. The command line sweeps far more
// (`sluice sim --workload quorum --seeds 1-10000`).
const (
	seedsToRun      = 300
	seedsToRunShort = 30
)

func TestSeedsPass(t *testing.T) {
	count := uint64(seedsToRun)
	if testing.Short() {
		count = seedsToRunShort
	}
	simtest.RunSeeds(t, newWorkload, 1, count, sim.RunOptions{}, func(t *testing.T, r sim.Result) {
		if !r.Passed() {
			t.Errorf("%s\nreplay: go run ./cmd/sluice sim --workload quorum --seed %d --trace", r.Line(), r.Seed)
		}
		if stat(t, r, "acked") < ackedMin {
			t.Errorf("seed %d acknowledged only %d proposals, want at least %d", r.Seed, stat(t, r, "acked"), ackedMin)
		}
	})
}

// ackedMin is the fewest acknowledged proposals a run must have to count
// as a test of anything: the liveness and final phases alone make six.
const ackedMin = 6

func TestSameSeedSameResult(t *testing.T) {
	simtest.SameSeedSameResult(t, newWorkload, 1, 2, 3)
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

// newWorkload is New as the shared helpers take it.
func newWorkload() sim.Workload { return New() }

// stat reads one of a result's integer stats.
func stat(t testing.TB, r sim.Result, name string) int {
	t.Helper()
	return int(simtest.Stat(t, r, name))
}
