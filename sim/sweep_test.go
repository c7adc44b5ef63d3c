package sim

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeWorkload fails the seeds in failing and records every seed it ran.
type fakeWorkload struct {
	mu      sync.Mutex
	failing map[uint64]bool
	ran     []uint64
}

func (w *fakeWorkload) Name() string { return "fake" }

func (w *fakeWorkload) Run(seed uint64, _ RunOptions) Result {
	w.mu.Lock()
	w.ran = append(w.ran, seed)
	w.mu.Unlock()
	r := Result{Seed: seed, SimTime: 10 * time.Second}
	if w.failing[seed] {
		r.Check = "lost-write"
	}
	return r
}

func TestSweepRunsEverySeedOnce(t *testing.T) {
	w := &fakeWorkload{}
	s := Sweep(w, SeedRange{First: 5, Last: 104}, SweepOptions{Workers: 3})
	if s.Seeds != 100 || s.Passed != 100 || s.Failed != 0 || s.TimeBoxed {
		t.Fatalf("summary %+v, want 100 seeds passed", s)
	}
	seen := map[uint64]int{}
	for _, seed := range w.ran {
		seen[seed]++
	}
	for seed := uint64(5); seed <= 104; seed++ {
		if seen[seed] != 1 {
			t.Fatalf("seed %d ran %d times", seed, seen[seed])
		}
	}
	if s.SimTime != 1000*time.Second || s.LastSeed != 104 {
		t.Fatalf("sim time %v, last seed %d; want 1000s and 104", s.SimTime, s.LastSeed)
	}
}

func TestSweepStopsAtAFailureUnlessKeepGoing(t *testing.T) {
	failing := map[uint64]bool{7: true, 9: true}
	stopped := Sweep(&fakeWorkload{failing: failing}, SeedRange{First: 1, Last: 50}, SweepOptions{Workers: 1})
	if stopped.Seeds != 7 || stopped.Failed != 1 || stopped.FirstFailure == nil || stopped.FirstFailure.Seed != 7 {
		t.Fatalf("one worker: summary %+v, want it to stop after seed 7", stopped)
	}
	all := Sweep(&fakeWorkload{failing: failing}, SeedRange{First: 1, Last: 50}, SweepOptions{Workers: 2, KeepGoing: true})
	if all.Seeds != 50 || all.Failed != 2 || all.FailuresByCheck["lost-write"] != 2 || all.FirstFailure.Seed != 7 {
		t.Fatalf("keep going: summary %+v, want 50 seeds, 2 failures, the first at 7", all)
	}
}

// TestSweepTimeBoxRunsAPrefix: a time box already over when the sweep
// starts still runs the first seed, and stops there.
func TestSweepTimeBoxRunsAPrefix(t *testing.T) {
	w := &fakeWorkload{}
	s := Sweep(w, SeedRange{First: 3, Last: 1000}, SweepOptions{Workers: 1, TimeBox: time.Nanosecond})
	if !s.TimeBoxed || s.Seeds != 1 || s.LastSeed != 3 || len(w.ran) != 1 || w.ran[0] != 3 {
		t.Fatalf("summary %+v, ran %v; want only seed 3, time-boxed", s, w.ran)
	}
}

// stoppingWorkload closes stop while it runs seed at.
type stoppingWorkload struct {
	fakeWorkload
	at   uint64
	stop chan struct{}
}

func (w *stoppingWorkload) Run(seed uint64, options RunOptions) Result {
	if seed == w.at {
		close(w.stop)
	}
	return w.fakeWorkload.Run(seed, options)
}

// TestSweepStopRunsAPrefix: Stop closed while seed 12 runs (Ctrl-C) lets it
// finish, hands out no other seed, and the summary says where the seeds
// run end; closed before the start, the first seed still runs.
func TestSweepStopRunsAPrefix(t *testing.T) {
	w := &stoppingWorkload{at: 12, stop: make(chan struct{})}
	s := Sweep(w, SeedRange{First: 10, Last: 1000}, SweepOptions{Workers: 1, Stop: w.stop})
	if !s.Stopped || s.TimeBoxed || s.Seeds != 3 || s.LastSeed != 12 || len(w.ran) != 3 || w.ran[2] != 12 {
		t.Fatalf("summary %+v, ran %v; want seeds 10-12, stopped", s, w.ran)
	}
	if line := s.Line(); !strings.HasSuffix(line, " stopped=seeds-up-to-12") {
		t.Fatalf("line %q does not say where the stopped sweep ends", line)
	}
	early := &fakeWorkload{}
	s = Sweep(early, SeedRange{First: 3, Last: 1000}, SweepOptions{Workers: 2, Stop: w.stop})
	if !s.Stopped || s.Seeds != 1 || s.LastSeed != 3 || len(early.ran) != 1 {
		t.Fatalf("stopped before the start: summary %+v, ran %v; want only seed 3", s, early.ran)
	}
}

func TestSweepLineGivesPerCoreFigures(t *testing.T) {
	s := SweepSummary{Seeds: 100, Passed: 100, Elapsed: 2 * time.Second, SimTime: 2000 * time.Second, Workers: 4, Cores: 2}
	want := "seeds=100 passed=100 failed=0 seeds_per_s=50.0 sim_speedup=1000x cores=2 seeds_per_s_per_core=25.0 sim_speedup_per_core=500x"
	if got := s.Line(); got != want {
		t.Fatalf("line\n%s\nwant\n%s", got, want)
	}
}

// A terminal gets one bar redrawn in place; a log gets lines, each whole,
// with no carriage return to pile a sweep into one line.
func TestSweepProgressSuitsWhereItIsWritten(t *testing.T) {
	var terminal, log strings.Builder
	Sweep(&fakeWorkload{}, SeedRange{First: 1, Last: 50}, SweepOptions{Workers: 2, Progress: &terminal})
	Sweep(&fakeWorkload{}, SeedRange{First: 1, Last: 50}, SweepOptions{Workers: 2, Progress: &log, ProgressLines: true})

	const final = "[##############################] 50/50 seeds "
	if got := terminal.String(); !strings.HasPrefix(got, "\r[") || !strings.HasSuffix(got, " \n") || !strings.Contains(got, final) {
		t.Fatalf("terminal progress %q: want a bar redrawn with \\r, ending with the full bar and a newline", got)
	}
	got := log.String()
	if strings.Contains(got, "\r") || !strings.HasSuffix(got, "\n") {
		t.Fatalf("log progress %q: want whole lines, no carriage return", got)
	}
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, final) || !strings.Contains(last, "failed=0 left 0s") {
		t.Fatalf("last progress line %q, want the finished sweep", last)
	}
}
