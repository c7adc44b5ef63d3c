package shrink

import (
	"strings"
	"testing"

	"sluice/core/replica"
	"sluice/sim"
	"sluice/sim/clusterworkload"
	"sluice/sim/scenario"
)

// shrinkTestRunsMax keeps the test to a few seconds; the command line's
// shrink has runsMaxDefault.
const shrinkTestRunsMax = 60

// TestShrinkKeepsTheCanarysFailure shrinks the first seed that catches a
// canary, writes the regression file, reads it back and runs it: the
// reduced case must fail the same check with the canary on, and be
// strictly smaller than the original.
func TestShrinkKeepsTheCanarysFailure(t *testing.T) {
	canaries := []string{replica.CanaryAcksBeforeSync}
	options := sim.RunOptions{Canaries: canaries}
	var original scenario.Scenario
	var failed sim.Result
	for seed := uint64(1); seed <= 20; seed++ {
		s := clusterworkload.ScenarioOf(seed, canaries)
		if r := clusterworkload.RunScenario(s, options); !r.Passed() && r.Check != "panic" {
			original, failed = s, r
			break
		}
	}
	if failed.Passed() {
		t.Fatal("the canary was not caught in seeds 1-20")
	}
	out := Shrink(original, failed.Check, failed, Options{
		Run:     func(s scenario.Scenario) sim.Result { return clusterworkload.RunScenario(s, options) },
		RunsMax: shrinkTestRunsMax,
	})
	if Size(out.Scenario) >= Size(original) {
		t.Fatalf("no smaller: size %d from %d after %d runs", Size(out.Scenario), Size(original), out.Runs)
	}
	if out.Runs > shrinkTestRunsMax || len(out.Steps) == 0 {
		t.Fatalf("runs %d (bound %d), steps %v", out.Runs, shrinkTestRunsMax, out.Steps)
	}
	for _, topic := range out.Scenario.Topics {
		if topic.Replication > out.Scenario.Cluster.Nodes {
			t.Fatalf("topic %s replicated %d ways on %d nodes", topic.Name, topic.Replication, out.Scenario.Cluster.Nodes)
		}
	}
	text := File(out, Origin{Workload: "cluster", Seed: failed.Seed, Canaries: canaries, Command: "sluice sim --seed 1", OriginalSize: Size(original), OriginalEvents: FaultEvents(original), Revision: "fbd50bf5494c+modified"})
	for _, want := range []string{"# Shrunk from cluster workload seed", "check " + failed.Check, "canary " + canaries[0], "expect fail " + failed.Check,
		"# Original: sluice sim --seed 1 (on revision fbd50bf5494c+modified)\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("the file lacks %q:\n%s", want, text)
		}
	}
	replayed, err := scenario.Parse(text)
	if err != nil {
		t.Fatalf("the file does not parse: %v\n%s", err, text)
	}
	// The file switches the canary on itself: no options needed.
	r := clusterworkload.RunScenario(replayed, sim.RunOptions{})
	if r.Check != failed.Check {
		t.Fatalf("the shrunk file fails %q, want %q:\n%s", r.Check, failed.Check, r.Line())
	}
	t.Logf("size %d -> %d, events %d -> %d, %d runs: %s", Size(original), Size(out.Scenario), FaultEvents(original), FaultEvents(out.Scenario), out.Runs, strings.Join(out.Steps, "; "))
}
