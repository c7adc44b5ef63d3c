package logworkload

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	"sluice/core/log"
	"sluice/sim"
	"sluice/sim/simtest"
)

const seedsPassing = 300

func TestSeedsPass(t *testing.T) {
	w := New()
	for seed := uint64(1); seed <= seedsPassing; seed++ {
		r := w.Run(seed, sim.RunOptions{})
		if !r.Passed() {
			t.Fatalf("%s", r.Line())
		}
		if r.TraceHash == "" || r.Steps == 0 || len(r.Options) == 0 || len(r.Stats) == 0 {
			t.Fatalf("seed %d: result missing its trace, options or stats: %s", seed, r.Line())
		}
	}
}

// A seed is a pure function: running it twice, with or without a trace
// printed, gives the same result down to the trace hash.
func TestSameSeedSameResult(t *testing.T) {
	w := New()
	for _, seed := range []uint64{1, 2, 3, 42, 1000} {
		first := w.Run(seed, sim.RunOptions{})
		var printed bytes.Buffer
		second := w.Run(seed, sim.RunOptions{Trace: &printed})
		if !reflect.DeepEqual(first, second) {
			t.Fatalf("seed %d ran differently:\n%s\n%s", seed, first.Line(), second.Line())
		}
		if printed.Len() == 0 {
			t.Fatalf("seed %d printed no trace", seed)
		}
		canary := w.Run(seed, sim.RunOptions{Canaries: []string{log.CanarySyncedBeforeDurable}})
		again := w.Run(seed, sim.RunOptions{Canaries: []string{log.CanarySyncedBeforeDurable}})
		if !reflect.DeepEqual(canary, again) {
			t.Fatalf("seed %d with a canary ran differently", seed)
		}
	}
	if a, b := w.Run(1, sim.RunOptions{}), w.Run(2, sim.RunOptions{}); a.TraceHash == b.TraceHash {
		t.Fatalf("seeds 1 and 2 have the same trace hash %s", a.TraceHash)
	}
}

// Each planted bug is caught within its stated number of seeds from seed
// 1, by the check meant to catch it.
func TestCanariesAreCaught(t *testing.T) {
	expectedChecks := map[string][]string{
		log.CanarySyncedBeforeDurable: {"synced-lost"},
		log.CanaryRecoverySkipsCRC:    {"recovery-kept-corrupt"},
		// A torn new segment swapped in: its batches are gone, or its
		// time index disagrees with them.
		log.CanaryCompactionSwapsUnsynced: {"synced-lost", "time-lookup"},
		// The restarted segment's file is gone: what was synced into it
		// does not come back.
		log.CanaryRestartReusesSegmentName: {"synced-lost"},
		// New batches mixed with removed ones: the removed come back
		// after the new (resurrected), or, where the mix breaks the
		// offsets, the log's own assertions fire or recovery keeps or
		// drops what it must not.
		log.CanaryAppendBeforeTruncationDurable: {"resurrected", "panic", "recovery-kept-corrupt", "synced-lost"},
		// Recovery back at the old start finds no segment there: the
		// batches synced before the restart are gone.
		log.CanaryRestartDropsOldLog: {"synced-lost"},
		// Only lookups by timestamp go through the time index and what
		// a segment tracks.
		log.CanaryCompactionTimeIndexLastOffset: {"time-lookup"},
	}
	for _, canary := range Canaries() {
		if canary.Workload != Name || canary.SeedsMax <= 0 || canary.Description == "" {
			t.Fatalf("canary %+v is incomplete", canary)
		}
		catch := simtest.FirstCatch(func() sim.Workload { return New() }, canary.Name, canary.SeedsMax, false)
		if catch.Seed == 0 {
			t.Fatalf("canary %s not caught within %d seeds", canary.Name, canary.SeedsMax)
		}
		if !slices.Contains(expectedChecks[canary.Name], catch.Result.Check) {
			t.Fatalf("canary %s caught by the wrong check: %s", canary.Name, catch.Result.Line())
		}
		t.Logf("%s caught at seed %d: %s", canary.Name, catch.Seed, catch.Result.Detail)
	}
}
