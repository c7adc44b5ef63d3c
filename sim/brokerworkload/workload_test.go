package brokerworkload

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"sluice/jepsen/checker"
	"sluice/sim"
)

// seedsToRun is how many seeds TestSeedsPass runs, from seed 1; -short
// runs seedsToRunShort.
const (
	seedsToRun      = 150
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
			t.Errorf("%s\nreplay: go run ./cmd/sluice sim --workload broker --seed %d --trace", r.Line(), r.Seed)
		}
		if stat(r, "ops") < operationsMin {
			t.Errorf("seed %d recorded only %d history ops, want at least %d", r.Seed, stat(r, "ops"), operationsMin)
		}
	})
}

// operationsMin is the fewest history ops (invokes and completions) a run
// must record to count as a test of anything: 200 operations.
const operationsMin = 400

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

func TestAcksOneLossIsReportedAsPermitted(t *testing.T) {
	// A plain acks=1 producer to every partition, a slow disk and
	// frequent crashes right after bursts of writes: the broker
	// acknowledges appends the crash then takes away.
	adjust := func(s *settings) {
		all := make([]int32, s.partitions)
		for i := range all {
			all[i] = int32(i)
		}
		s.producers = []producerSettings{{acks: 1, partitions: all}}
		s.disk.SyncLatencyMin, s.disk.SyncLatencyMax = 5e6, 20e6 // 5-20 ms
		s.disk.SyncFailure = 0
		s.brokerCrashMean = 1e9 // 1 s
		s.crashUnderLoad = 1
	}
	lossy := 0
	for seed := uint64(1); seed <= 5; seed++ {
		result, r := runSeed(seed, sim.RunOptions{}, adjust)
		if !result.Passed() {
			t.Fatalf("acks=1 run failed instead of permitting its loss: %s", result.Line())
		}
		if stat(result, "loss_permitted") == 0 {
			continue
		}
		lossy++
		// The same history judged as if acks=all had been promised
		// must fail: the loss is real, and only the option excuses it.
		strict := checker.Check(r.recorder.History(), checker.Options{FinalDrain: true})
		if strict.Valid {
			t.Fatalf("seed %d reported %d permitted losses, but the strict check passes", seed, stat(result, "loss_permitted"))
		}
	}
	if lossy == 0 {
		t.Fatal("no acks=1 run lost a write; the test no longer exercises permitted loss")
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
