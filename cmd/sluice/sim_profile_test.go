package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"sluice/sim"
	"sluice/sim/clusterworkload"
	"sluice/sim/scenario"
)

// --profile leans every seed the named way, with no bug planted: the run
// of a seed under the profile is the run of the scenario leaned so, and
// not the seed's plain draw.
func TestSimProfileLeansEverySeedWithoutPlantingTheBug(t *testing.T) {
	const profile = "broker-lease-outlasts-fencing"
	for seed := uint64(1); seed <= 3; seed++ {
		s := clusterworkload.ScenarioLeaningTo(seed, profile)
		if s.Profile != profile || len(s.Canaries) != 0 {
			t.Fatalf("seed %d leaned to %q with canaries %v, want %q and none", seed, s.Profile, s.Canaries, profile)
		}
		if cmp.Equal(s, scenario.Draw(seed)) {
			t.Fatalf("seed %d: the profile left the draw as it was", seed)
		}
		got := clusterworkload.New().Run(seed, sim.RunOptions{Profile: profile})
		want := clusterworkload.RunScenario(s, sim.RunOptions{})
		if got.Line() != want.Line() {
			t.Fatalf("seed %d under --profile:\n%s\nwant the leaned scenario's run:\n%s", seed, got.Line(), want.Line())
		}
		if !got.Passed() {
			t.Fatalf("seed %d failed with no bug planted: %s", seed, got.Line())
		}
	}
	if rc := runSim([]string{"--seeds", "1-2", "--profile", profile, "--workers", "1"}); rc != 0 {
		t.Fatalf("sluice sim --seeds 1-2 --profile %s: exit %d", profile, rc)
	}
}

func TestSimProfileRefusesWhatItCannotLean(t *testing.T) {
	for name, args := range map[string][]string{
		"an unknown profile":     {"--seed", "1", "--profile", "no-such-profile"},
		"another workload":       {"--workload", "log", "--seed", "1", "--profile", "replica-hw-without-isr"},
		"a canary besides":       {"--seed", "1", "--profile", "replica-hw-without-isr", "--canary", "replica-hw-without-isr"},
		"a scenario given whole": {"--scenario", "../../scenarios/leader-isolation.txt", "--profile", "replica-hw-without-isr"},
	} {
		if rc := runSim(args); rc != 2 {
			t.Errorf("%s: exit %d, want 2", name, rc)
		}
	}
}
