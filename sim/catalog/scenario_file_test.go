package catalog

import (
	"strings"
	"testing"

	"sluice/sim"
)

// TestScenarioFileReadsRequirementsAndOldCommandLines checks the two
// things scenario files carry beyond the scenario format: "# require"
// lines, and regression files that are only a command line.
func TestScenarioFileReadsRequirementsAndOldCommandLines(t *testing.T) {
	f, err := ParseScenarioFile("# what it does\n# require fault_crash>=2 crashes>=3\n# require faults>=1\nseed 4\nnodes 3\nexpect pass\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(f.Requires); got != 3 || f.Requires[0].String() != "fault_crash>=2" || f.Requires[2].String() != "faults>=1" {
		t.Fatalf("requires %v", f.Requires)
	}
	if f.Scenario.Seed != 4 || f.Scenario.Cluster.Nodes != 3 {
		t.Fatalf("seed %d nodes %d", f.Scenario.Seed, f.Scenario.Cluster.Nodes)
	}
	again, err := ParseScenarioFile("seed 4\nnodes 3\n", 9)
	if err != nil || again.Scenario.Seed != 9 {
		t.Fatalf("a --seed must replace the file's: %v %d", err, again.Scenario.Seed)
	}
	old, err := ParseScenarioFile("# broke once\ngo run ./cmd/sluice sim --workload broker --seed 35 --canary producer-duplicate-window-ignored\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	if s := old.Scenario; s.Workload != "broker" || s.Seed != 35 || len(s.Canaries) != 1 || s.Canaries[0] != "producer-duplicate-window-ignored" {
		t.Fatalf("old command line read as %+v", s)
	}
	for _, bad := range []string{"# require crashes>3\n", "# require >=3\n", "canary no-such-bug\n", "workload no-such-workload\n"} {
		if _, err := ParseScenarioFile(bad, 0); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// TestJudgeHoldsARunToItsFile checks Judge's verdicts: an expected pass,
// an expected failure of one check, and a requirement not met.
func TestJudgeHoldsARunToItsFile(t *testing.T) {
	pass := sim.Result{Stats: []sim.Option{sim.Opt("fault_crash", 2)}}
	failed := sim.Result{Check: "lost-write", Detail: "gone"}
	f, _ := ParseScenarioFile("# require fault_crash>=2\nexpect pass\n", 0)
	if err := f.Judge(pass); err != nil {
		t.Errorf("a pass with its crashes: %v", err)
	}
	if err := f.Judge(failed); err == nil || !strings.Contains(err.Error(), "lost-write") {
		t.Errorf("a failure of an expected pass: %v", err)
	}
	f, _ = ParseScenarioFile("# require fault_crash>=3\n", 0)
	if err := f.Judge(pass); err == nil || !strings.Contains(err.Error(), "did not happen") {
		t.Errorf("too few crashes: %v", err)
	}
	f, _ = ParseScenarioFile("expect fail lost-write\n", 0)
	if err := f.Judge(failed); err != nil {
		t.Errorf("the expected failure: %v", err)
	}
	if err := f.Judge(sim.Result{Check: "duplicate"}); err == nil {
		t.Error("another check's failure accepted")
	}
	if err := f.Judge(pass); err == nil {
		t.Error("a pass accepted where a failure was expected")
	}
}

// A scenario file's profile must be one the cluster workload has: an
// unknown one was taken, as a note no run read.
func TestScenarioFileRefusesAnUnknownProfile(t *testing.T) {
	if _, err := ParseScenarioFile("profile nope\n", 0); err == nil || !strings.Contains(err.Error(), `unknown profile "nope"`) {
		t.Fatalf("profile nope: %v", err)
	}
	if _, err := ParseScenarioFile("profile replica-acks-before-sync\n", 0); err != nil {
		t.Fatalf("a known profile: %v", err)
	}
}
