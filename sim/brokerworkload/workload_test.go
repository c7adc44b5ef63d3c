package brokerworkload

import (
	"testing"

	"sluice/jepsen/checker"
	"sluice/sim"
	"sluice/sim/simtest"
)

// seedsToRun is how many seeds TestSeedsPass runs, from seed 1; -short
// runs seedsToRunShort.
const (
	seedsToRun      = 150
	seedsToRunShort = 30
)

func TestSeedsPass(t *testing.T) {
	count := uint64(seedsToRun)
	if testing.Short() {
		count = seedsToRunShort
	}
	simtest.RunSeeds(t, newWorkload, 1, count, sim.RunOptions{}, func(t *testing.T, r sim.Result) {
		if !r.Passed() {
			t.Errorf("%s\nreplay: go run ./cmd/sluice sim --workload broker --seed %d --trace", r.Line(), r.Seed)
		}
		if stat(t, r, "ops") < operationsMin {
			t.Errorf("seed %d recorded only %d history ops, want at least %d", r.Seed, stat(t, r, "ops"), operationsMin)
		}
	})
}

// operationsMin is the fewest history ops (invokes and completions) a run
// must record to count as a test of anything: 200 operations.
const operationsMin = 400

func TestSameSeedSameResult(t *testing.T) {
	simtest.SameSeedSameResult(t, newWorkload, 1, 2, 3)
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
		if stat(t, result, "loss_permitted") == 0 {
			continue
		}
		lossy++
		// The same history judged as if acks=all had been promised
		// must fail: the loss is real, and only the option excuses it.
		strict := checker.Check(r.recorder.History(), checker.Options{FinalDrain: true})
		if strict.Valid {
			t.Fatalf("seed %d reported %d permitted losses, but the strict check passes", seed, stat(t, result, "loss_permitted"))
		}
	}
	if lossy == 0 {
		t.Fatal("no acks=1 run lost a write; the test no longer exercises permitted loss")
	}
}

// newWorkload is New as the shared helpers take it.
func newWorkload() sim.Workload { return New() }

// stat reads one of a result's integer stats.
func stat(t testing.TB, r sim.Result, name string) int {
	t.Helper()
	return int(simtest.Stat(t, r, name))
}
