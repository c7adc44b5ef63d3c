package main

import (
	"strings"
	"testing"

	"sluice/jepsen/checker"
	"sluice/sim"
	"sluice/sim/clusterworkload"
)

// --search-steps is the budget of the checker's linearizability searches:
// a run whose search cannot finish within it is inconclusive, and the
// same run given the default budget is decided. (The canary's failing
// committed offsets are found not to linearize by the deciding search,
// which one step cannot do; a passing seed's quick search needs none.)
func TestSimSearchStepsBoundTheCheckersSearches(t *testing.T) {
	options := sim.RunOptions{Canaries: []string{"broker-reads-past-lease"}}
	decided := clusterworkload.New().Run(1, options)
	if decided.Check != string(checker.NonlinearizableCommittedOffset) {
		t.Fatalf("the canary's seed 1 with the default budget: %s", decided.Line())
	}
	options.SearchSteps = 1
	starved := clusterworkload.New().Run(1, options)
	if starved.Check != checker.CheckInconclusive || !strings.Contains(starved.Detail, "ran out of its 1 steps") {
		t.Fatalf("the canary's seed 1 with one step: %s", starved.Line())
	}
	if starved.TraceHash == decided.TraceHash {
		t.Fatal("the verdict changed and the trace did not")
	}
	if passed := clusterworkload.New().Run(2, sim.RunOptions{SearchSteps: 1}); !passed.Passed() {
		t.Fatalf("seed 2 with one step: %s", passed.Line())
	}
}

// An inconclusive run's next steps offer the replay with more steps.
func TestSimNextStepsOfAnInconclusiveRunOfferMoreSteps(t *testing.T) {
	var next strings.Builder
	printNextSteps(&next, clusterworkload.Name, 42, "sluice sim --workload cluster --seed 42", "sluice sim --workload cluster --seed 42 --search-steps 134217728")
	if !strings.Contains(next.String(), "--seed 42 --search-steps 134217728   (the checker's search ran out") {
		t.Fatalf("no replay with more steps:\n%s", next.String())
	}
}

func TestSimSearchStepsRefusesWhatHasNoSearch(t *testing.T) {
	for name, args := range map[string][]string{
		"negative steps":             {"--seed", "1", "--search-steps", "-5"},
		"a workload without history": {"--workload", "quorum", "--seed", "1", "--search-steps", "100"},
	} {
		if rc := runSim(args); rc != 2 {
			t.Errorf("%s: exit %d, want 2", name, rc)
		}
	}
}
