package main

import (
	"os"
	"strings"
	"testing"
)

// Each of these was taken and silently ignored (a positional word ran
// seed 0; a quorum sweep with a replica canary reported every seed
// passed), or made a shrink work for minutes before failing to write.
// Each now exits 2 before running anything.
func TestSimRefusesFlagsThatWouldBeIgnored(t *testing.T) {
	for _, args := range [][]string{
		{"extra-arg", "--seed", "1"},
		{"--seed", "0", "--seeds", "1-3"},
		{"--trace", "--seeds", "1-2"},
		{"--seed", "1", "--time-box", "3s"},
		{"--seed", "1", "--keep-going"},
		{"--seed", "1", "--log-level", "debug"},
		{"--seeds", "1-2", "--time-box", "-1s"},
		{"--seed", "1", "--out", "x.txt"},
		{"--workload", "quorum", "--seeds", "1-2", "--canary", "replica-acks-before-sync"},
		{"--workload", "log", "--scenario", "../../scenarios/leader-isolation.txt"},
		{"--seed", "1", "--canary", "group-stale-generation-commit", "--shrink", "--out", "/nonexistent-dir/x.txt"},
	} {
		if code := runSim(args); code != 2 {
			t.Errorf("sluice sim %s: exit %d, want 2", strings.Join(args, " "), code)
		}
	}
	if code := runSim([]string{"-h"}); code != 0 {
		t.Errorf("sluice sim -h: exit %d, want 0", code)
	}
}

// The commands a failing seed prints name the binary as it was run, so
// they paste as printed.
func TestSimCommandIsHowTheBinaryWasRun(t *testing.T) {
	saved := os.Args[0]
	defer func() { os.Args[0] = saved }()
	for argv0, want := range map[string]string{
		"bin/sluice":                        "bin/sluice sim",
		"/usr/local/bin/sluice":             "/usr/local/bin/sluice sim",
		"sluice":                            "sluice sim",
		"/tmp/go-build1234/b001/exe/sluice": "go run ./cmd/sluice sim",
	} {
		os.Args[0] = argv0
		if got := simCommand(); got != want {
			t.Errorf("run as %s: %q, want %q", argv0, got, want)
		}
	}
}
