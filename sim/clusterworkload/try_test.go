package clusterworkload

import (
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"sluice/sim"
	"sluice/sim/scenario"
)

// TestTry runs seeds FIRST..FIRST+COUNT-1 and logs failures; a tool for
// exploring, skipped unless TRY is set.
func TestTry(t *testing.T) {
	if os.Getenv("TRY") == "" {
		t.Skip("set TRY=1 (and FIRST, COUNT, CANARY, VERBOSE) to explore seeds")
	}
	first, _ := strconv.Atoi(os.Getenv("FIRST"))
	count, _ := strconv.Atoi(os.Getenv("COUNT"))
	if count == 0 {
		count = 50
	}
	failed := 0
	start := time.Now()
	var simTime time.Duration
	for seed := uint64(first); seed < uint64(first+count); seed++ {
		r := New().Run(seed, sim.RunOptions{Canaries: splitCanaries(os.Getenv("CANARY"))})
		if bias := os.Getenv("BIAS"); bias != "" {
			// The scenario a canary's seed runs, without the canary.
			r = RunScenario(biased(scenario.Draw(seed), splitCanaries(bias)), sim.RunOptions{})
		}
		simTime += r.SimTime
		if os.Getenv("VERBOSE") != "" {
			t.Log(r.Line())
		}
		if !r.Passed() {
			failed++
			if failed < 8 && os.Getenv("VERBOSE") == "" {
				t.Log(r.Line())
			}
		}
	}
	elapsed := time.Since(start)
	t.Logf("failed %d of %d; %.1f seeds/s, sim %.0fx", failed, count, float64(count)/elapsed.Seconds(), simTime.Seconds()/elapsed.Seconds())
}

// TestTryOne runs SEED, or the scenario file SCENARIO, with panics
// unrecovered, printing the trace when TRACE is set, with core's info
// lines (INFO) or debug lines (DEBUG).
func TestTryOne(t *testing.T) {
	if os.Getenv("SEED") == "" && os.Getenv("SCENARIO") == "" {
		t.Skip("set SEED or SCENARIO (and TRACE, CANARY) to run one seed")
	}
	reportPanics = false
	seed, _ := strconv.Atoi(os.Getenv("SEED"))
	options := sim.RunOptions{Canaries: splitCanaries(os.Getenv("CANARY"))}
	if os.Getenv("TRACE") != "" {
		options.Trace = os.Stdout
	}
	for _, level := range []struct {
		env   string
		level slog.Level
	}{{"INFO", slog.LevelInfo}, {"DEBUG", slog.LevelDebug}} {
		if os.Getenv(level.env) != "" {
			options.LogLevel = &level.level
		}
	}
	if file := os.Getenv("SCENARIO"); file != "" {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		s, err := scenario.Parse(string(text))
		if err != nil {
			t.Fatal(err)
		}
		t.Log(RunScenario(s, options).Line())
		return
	}
	t.Log(New().Run(uint64(seed), options).Line())
}

func splitCanaries(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
