package clusterworkload

import (
	"slices"
	"testing"
	"time"

	"sluice/sim"
	"sluice/sim/scenario"
	"sluice/sim/simtest"
)

// floorSeeds is how many seeds the floors are checked on.
const floorSeeds = 24

// TestDefaultScenarioMeetsItsFloors runs seeds of the default scenario and
// checks what each run did against the floors issue 7 sets: at least 200
// client operations (400 history entries: an invocation and a completion
// each; the safety phase waits for them), at least 3 faults and at least
// 10 simulated seconds. Draw's test checks what is drawn; this one checks
// what happened.
func TestDefaultScenarioMeetsItsFloors(t *testing.T) {
	for seed := uint64(1); seed <= floorSeeds; seed++ {
		r := New().Run(seed, sim.RunOptions{})
		if !r.Passed() {
			t.Fatalf("seed %d failed: %s", seed, r.Line())
		}
		if ops := stat(t, r, "ops"); ops < 400 {
			t.Errorf("seed %d recorded %d history entries, want at least 400 (200 client operations)", seed, ops)
		}
		if faults := stat(t, r, "faults"); faults < 3 {
			t.Errorf("seed %d injected %d faults, want at least 3", seed, faults)
		}
		if r.SimTime < 10*time.Second {
			t.Errorf("seed %d ran %v of simulated time, want at least 10s", seed, r.SimTime)
		}
	}
}

func stat(t *testing.T, r sim.Result, name string) int64 {
	t.Helper()
	return simtest.Stat(t, r, name)
}

// newWorkload is New as the shared helpers take it.
func newWorkload() sim.Workload { return New() }

// TestSafetyPhaseWaitsForTheOperationsFloor runs a short safety phase with
// a floor its clients cannot reach in time: the phase runs on until they
// have, and a floor no run can reach still ends after OperationsWaitMax.
func TestSafetyPhaseWaitsForTheOperationsFloor(t *testing.T) {
	s := scenario.Draw(3)
	s.Safety = 2 * time.Second
	s.Schedule = slices.DeleteFunc(s.Schedule, func(e scenario.Event) bool { return e.At >= s.Safety })
	s.Operations = 600

	r := RunScenario(s, sim.RunOptions{})
	if !r.Passed() {
		t.Fatalf("run failed: %s", r.Line())
	}
	if ops := stat(t, r, "ops"); ops < 2*int64(s.Operations) {
		t.Errorf("recorded %d history entries, want at least %d", ops, 2*s.Operations)
	}
	if wait := durationStat(t, r, "operations_wait"); wait <= 0 {
		t.Errorf("operations_wait=%v: the safety phase did not run on", wait)
	}

	s.Operations = 100_000
	r = RunScenario(s, sim.RunOptions{})
	if !r.Passed() {
		t.Fatalf("run with an unreachable floor failed: %s", r.Line())
	}
	if wait := durationStat(t, r, "operations_wait"); wait != scenario.OperationsWaitMax {
		t.Errorf("operations_wait=%v, want the bound %v", wait, scenario.OperationsWaitMax)
	}
}

func durationStat(t *testing.T, r sim.Result, name string) time.Duration {
	t.Helper()
	for _, o := range r.Stats {
		if o.Name == name {
			d, err := time.ParseDuration(o.Value)
			if err != nil {
				t.Fatalf("seed %d: stat %s=%q: %v", r.Seed, name, o.Value, err)
			}
			return d
		}
	}
	t.Fatalf("seed %d reports no stat %s", r.Seed, name)
	return 0
}
