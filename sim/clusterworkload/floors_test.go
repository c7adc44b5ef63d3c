package clusterworkload

import (
	"testing"
	"time"

	"sluice/sim"
)

// floorSeeds is how many seeds the floors are checked on.
const floorSeeds = 24

// TestDefaultScenarioMeetsItsFloors runs seeds of the default scenario and
// checks what each run did against the floors issue 7 sets: at least 200
// client operations (400 history entries: an invocation and a completion
// each), at least 3 faults and at least 10 simulated seconds. Draw's test
// checks what is drawn; this one checks what happened.
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
	value, listed := r.Stat(name)
	if !listed {
		t.Fatalf("seed %d reports no stat %s", r.Seed, name)
	}
	return value
}
