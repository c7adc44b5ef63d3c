package catalog

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sluice/sim"
)

// TestRegressionSeedsPass replays every seed committed under
// scenarios/regressions: each file holds comment lines saying what broke and
// a `sluice sim --workload W --seed S` command that replayed the failure.
func TestRegressionSeedsPass(t *testing.T) {
	files, err := filepath.Glob("../../scenarios/regressions/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no regression files found")
	}
	for _, file := range files {
		workloadName, seed, canaries := parseReplayCommand(t, file)
		w, ok := Workload(workloadName)
		if !ok {
			t.Fatalf("%s: unknown workload %q", file, workloadName)
		}
		r := w.Run(seed, sim.RunOptions{Canaries: canaries})
		if !r.Passed() {
			t.Errorf("%s regressed:\n%s", filepath.Base(file), r.Line())
		}
	}
}

func parseReplayCommand(t *testing.T, file string) (workload string, seed uint64, canaries []string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		for i := 0; i+1 < len(fields); i++ {
			switch fields[i] {
			case "--workload":
				workload = fields[i+1]
			case "--seed":
				seedRange, err := sim.ParseSeedRange(fields[i+1])
				if err != nil {
					t.Fatalf("%s: %v", file, err)
				}
				seed = seedRange.First
			case "--canary":
				canaries = strings.Split(fields[i+1], ",")
			}
		}
	}
	if workload == "" || seed == 0 {
		t.Fatalf("%s: no `sluice sim --workload W --seed S` line", file)
	}
	return workload, seed, canaries
}
