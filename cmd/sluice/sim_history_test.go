package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"sluice/jepsen/history"
	"sluice/sim"
	"sluice/sim/brokerworkload"
	"sluice/sim/clusterworkload"
)

func TestSimHistoryWritesTheHistoryItsChecksJudged(t *testing.T) {
	const seed = 11
	path := filepath.Join(t.TempDir(), "history.jsonl")
	if rc := runSim([]string{"--seed", "11", "--history", path}); rc != 0 {
		t.Fatalf("sluice sim --seed %d --history: exit %d", seed, rc)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	written, err := history.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	want := clusterworkload.New().Run(seed, sim.RunOptions{Record: true}).Recording.History
	if len(want) < 200 {
		t.Fatalf("seed %d recorded only %d ops", seed, len(want))
	}
	if diff := cmp.Diff(want, written); diff != "" {
		t.Fatalf("written history differs from the run's (-run +file):\n%s", diff)
	}
}

func TestSimHistoryRefusesWhatItCannotWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	for name, args := range map[string][]string{
		"a workload without a recording": {"--workload", "quorum", "--seed", "3", "--history", path},
		"a sweep":                        {"--seeds", "1-2", "--history", path},
	} {
		if rc := runSim(args); rc != 2 {
			t.Errorf("%s: exit %d, want 2", name, rc)
		}
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a refused --history left a file behind: %v", err)
	}
}

func TestParseLogLevel(t *testing.T) {
	if level, err := parseLogLevel(""); level != nil || err != nil {
		t.Fatalf(`parseLogLevel(""): %v, %v; want the workload's own level`, level, err)
	}
	for text, want := range map[string]slog.Level{"debug": slog.LevelDebug, "INFO": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError} {
		level, err := parseLogLevel(text)
		if err != nil || level == nil || *level != want {
			t.Errorf("parseLogLevel(%q): %v, %v; want %v", text, level, err, want)
		}
	}
	if _, err := parseLogLevel("loud"); err == nil {
		t.Fatal(`parseLogLevel("loud") accepted it`)
	}
}

func TestSimNextStepsForAFailingSeed(t *testing.T) {
	var cluster, broker strings.Builder
	printNextSteps(&cluster, clusterworkload.Name, 42, "sluice sim --workload cluster --seed 42", "")
	printNextSteps(&broker, brokerworkload.Name, 7, "sluice sim --workload broker --seed 7", "")
	for _, want := range []string{
		"sluice sim --workload cluster --seed 42 --report seed-42.html",
		"sluice sim --workload cluster --seed 42 --trace --log-level debug",
		"sluice sim --workload cluster --seed 42 --shrink",
	} {
		if !strings.Contains(cluster.String(), want) {
			t.Errorf("the cluster's next steps lack %q:\n%s", want, cluster.String())
		}
	}
	if !strings.Contains(broker.String(), "--seed 7 --report seed-7.html") || strings.Contains(broker.String(), "--shrink") {
		t.Errorf("the broker's next steps: want a report and no shrink (it has no scenarios):\n%s", broker.String())
	}
}
