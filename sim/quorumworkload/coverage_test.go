package quorumworkload

import (
	"slices"
	"strings"
	"testing"

	"sluice/sim"
	"sluice/sim/scenario"
)

// coverageSeeds is how many seeds the coverage test sums.
const coverageSeeds = 40

// TestCoverageNamesTheFaultsApplied sums a short sweep's coverage: it
// counts exactly the faults the result lines count, by kind, and only
// kinds and sites the workload declares.
func TestCoverageNamesTheFaultsApplied(t *testing.T) {
	sum := sim.NewCoverage(nil, nil)
	stats := map[string]int64{}
	for seed := uint64(1); seed <= coverageSeeds; seed++ {
		r := New().Run(seed, sim.RunOptions{})
		if !r.Passed() {
			t.Fatalf("seed %d failed: %s", seed, r.Line())
		}
		if r.Coverage == nil {
			t.Fatalf("seed %d counted no coverage", seed)
		}
		sum.Add(r.Coverage)
		for _, name := range []string{"crashes", "power_losses", "pauses", "partitions"} {
			n, _ := r.Stat(name)
			stats[name] += n
		}
	}
	declared := newCoverage()
	if !slices.Equal(sum.KnownFaults, declared.KnownFaults) || !slices.Equal(sum.KnownSites, declared.KnownSites) {
		t.Fatalf("known faults %v and sites %v, want the declared %v and %v", sum.KnownFaults, sum.KnownSites, declared.KnownFaults, declared.KnownSites)
	}
	for stat, kind := range map[string]scenario.Kind{"crashes": scenario.KindCrash, "power_losses": scenario.KindPowerLoss, "pauses": scenario.KindPause} {
		if got := int64(sum.Faults[string(kind)]); got != stats[stat] || got == 0 {
			t.Errorf("coverage counts %d %s, the result lines %d %s; want the same, above zero", got, kind, stats[stat], stat)
		}
	}
	shapes := uint64(0)
	for _, kind := range []scenario.Kind{scenario.KindIsolate, scenario.KindCutFrom, scenario.KindCutTo, scenario.KindBridge, scenario.KindPartition} {
		if sum.Faults[string(kind)] == 0 {
			t.Errorf("no %s in %d seeds", kind, coverageSeeds)
		}
		shapes += sum.Faults[string(kind)]
	}
	if shapes == 0 || int64(shapes) > stats["partitions"] {
		t.Errorf("%d partition shapes counted, %d partitions in the result lines", shapes, stats["partitions"])
	}
	if sum.SitesReached["quorum-election-timeout-shortest"] == 0 {
		t.Errorf("no election timeout reached its BUGGIFY site: %v", sum.SitesReached)
	}
	line := sum.Line()
	for kind, n := range sum.Faults {
		if n > 0 && !strings.Contains(line, "fault_"+kind+"=") {
			t.Errorf("the coverage line does not name %s:\n%s", kind, line)
		}
	}
	for _, missed := range sum.NeverReached() {
		name := missed[strings.Index(missed, ":")+1:]
		if !slices.Contains(declared.KnownFaults, name) && !slices.Contains(declared.KnownSites, name) {
			t.Errorf("never reached names %s, which the workload cannot reach", missed)
		}
	}
}
