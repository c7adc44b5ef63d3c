package clusterworkload

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"sluice/sim/scenario"
)

// A fifth of the seeds take a profile, every profile comes up, a profiled
// scenario is valid and names its profile, and a seed without one runs
// its plain draw.
func TestProfilesLeanAFifthOfTheSeeds(t *testing.T) {
	const seeds = 2000
	seen := map[string]int{}
	for seed := uint64(1); seed <= seeds; seed++ {
		s := ScenarioOf(seed, nil)
		if s.Profile == "" {
			if diff := cmp.Diff(scenario.Draw(seed), s); diff != "" {
				t.Fatalf("seed %d has no profile but is not its draw:\n%s", seed, diff)
			}
			continue
		}
		seen[s.Profile]++
		if _, known := canaryBiases[s.Profile]; !known {
			t.Fatalf("seed %d: unknown profile %q", seed, s.Profile)
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("seed %d, profile %s: %v", seed, s.Profile, err)
		}
		if again := ScenarioOf(seed, nil); !cmp.Equal(s, again) {
			t.Fatalf("seed %d drew its profile differently twice", seed)
		}
	}
	total := 0
	for _, n := range seen {
		total += n
	}
	if total < seeds/7 || total > seeds/3 {
		t.Fatalf("%d of %d seeds profiled, want about a fifth", total, seeds)
	}
	if len(seen) != len(canaryBiases) {
		t.Fatalf("profiles seen %v, want all %d", seen, len(canaryBiases))
	}
	// A canary's runs lean its own way, never a drawn profile's.
	if s := ScenarioOf(3, []string{"replica-acks-before-sync"}); s.Profile != "" {
		t.Fatalf("a canary run took profile %q", s.Profile)
	}
}
