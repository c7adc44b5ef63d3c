package brokerworkload

import (
	"slices"
	"strings"
	"testing"

	"sluice/sim"
	"sluice/sim/scenario"
)

// coverageSeeds is how many seeds the coverage test sums.
const coverageSeeds = 6

// TestCoverageNamesTheFaultsApplied sums a short sweep's coverage: it
// counts exactly the faults the result lines count, by kind, only kinds
// the workload declares, and only the BUGGIFY sites it declares, those
// one broker can reach.
func TestCoverageNamesTheFaultsApplied(t *testing.T) {
	sum := sim.NewCoverage(nil, nil)
	stats := map[string]int64{}
	kinds := map[string]string{
		"broker_crashes":       string(scenario.KindCrash),
		"crashes_in_rebalance": faultCrashInRebalance,
		"resets":               string(scenario.KindReset),
		"client_crashes":       string(scenario.KindClientCrash),
		"full_disk":            string(scenario.KindFullDisk),
		"slow_disk":            string(scenario.KindSlowDisk),
		"consumer_leaves":      faultConsumerLeave,
		"consumer_stalls":      faultConsumerStall,
	}
	var declared []string
	for seed := uint64(1); seed <= coverageSeeds; seed++ {
		r := New().Run(seed, sim.RunOptions{})
		if !r.Passed() {
			t.Fatalf("seed %d failed: %s", seed, r.Line())
		}
		if r.Coverage == nil {
			t.Fatalf("seed %d counted no coverage", seed)
		}
		declared = r.Coverage.KnownFaults
		sum.Add(r.Coverage)
		for stat := range kinds {
			n, _ := r.Stat(stat)
			stats[stat] += n
		}
	}
	if !slices.Equal(sum.KnownSites, reachableSites()) {
		t.Fatalf("sites %v; want the declared %v (a site reached but not declared joins the list)", sum.KnownSites, reachableSites())
	}
	for stat, kind := range kinds {
		if !slices.Contains(declared, kind) {
			t.Errorf("the workload does not declare %s", kind)
		}
		if got := int64(sum.Faults[kind]); got != stats[stat] {
			t.Errorf("coverage counts %d %s, the result lines %s=%d", got, kind, stat, stats[stat])
		}
	}
	for _, kind := range []string{string(scenario.KindCrash), string(scenario.KindReset), string(scenario.KindClientCrash), sim.FaultReadCorruption} {
		if sum.Faults[kind] == 0 {
			t.Errorf("no %s in %d seeds: %v", kind, coverageSeeds, sum.Faults)
		}
	}
	line := sum.Line()
	for kind, n := range sum.Faults {
		if n > 0 && !strings.Contains(line, "fault_"+kind+"=") {
			t.Errorf("the coverage line does not name %s:\n%s", kind, line)
		}
	}
}
