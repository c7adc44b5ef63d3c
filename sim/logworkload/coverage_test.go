package logworkload

import (
	"slices"
	"strings"
	"testing"

	"sluice/core"
	"sluice/sim"
	"sluice/sim/scenario"
)

// coverageSeeds is how many seeds the coverage test sums.
const coverageSeeds = 60

// TestCoverageNamesTheFaultsApplied sums a short sweep's coverage: it
// counts the crashes and the disk's faults the result lines count, only
// kinds the workload declares, and only core/log's BUGGIFY sites.
func TestCoverageNamesTheFaultsApplied(t *testing.T) {
	sum := sim.NewCoverage(nil, nil)
	stats := map[string]int64{}
	kinds := map[string]string{
		"crashes":         string(scenario.KindCrash),
		"crashes_torn":    sim.FaultTornWrite,
		"reads_corrupted": sim.FaultReadCorruption,
		"syncs_failed":    sim.FaultSyncFailure,
	}
	for seed := uint64(1); seed <= coverageSeeds; seed++ {
		r := New().Run(seed, sim.RunOptions{})
		if !r.Passed() {
			t.Fatalf("seed %d failed: %s", seed, r.Line())
		}
		if r.Coverage == nil {
			t.Fatalf("seed %d counted no coverage", seed)
		}
		sum.Add(r.Coverage)
		for stat := range kinds {
			n, _ := r.Stat(stat)
			stats[stat] += n
		}
	}
	want := []string{string(scenario.KindCrash), string(scenario.KindFullDisk), sim.FaultReadCorruption, sim.FaultSyncFailure, sim.FaultTornWrite}
	wantSites := []string{core.BuggifyLogReadSmallChunks, core.BuggifyLogSyncDelayed}
	if !slices.Equal(sum.KnownFaults, want) || !slices.Equal(sum.KnownSites, wantSites) {
		t.Fatalf("known faults %v, sites %v; want %v and %v", sum.KnownFaults, sum.KnownSites, want, wantSites)
	}
	for stat, kind := range kinds {
		if got := int64(sum.Faults[kind]); got != stats[stat] || got == 0 {
			t.Errorf("coverage counts %d %s, the result lines %s=%d; want the same, above zero", got, kind, stat, stats[stat])
		}
	}
	if sum.Faults[string(scenario.KindFullDisk)] == 0 {
		t.Errorf("no full disk in %d seeds", coverageSeeds)
	}
	if missed := sum.NeverReached(); len(missed) != 0 {
		t.Errorf("never reached %v in %d seeds", missed, coverageSeeds)
	}
	if line := sum.Line(); !strings.Contains(line, "fault_crash=") || !strings.HasSuffix(line, "never reached: nothing") {
		t.Errorf("coverage line:\n%s", line)
	}
}
