package sim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"sluice/sim/kernel"
)

// leaky is a workload with the bug that breaks replay most often: state
// that outlives a run. Its trace has lines events; the one at line partAt
// (1-based) names how many runs the workload has made, so two runs part
// there. With extra, the second and later runs write one more line.
type leaky struct {
	runs, lines, partAt int
	extra               bool
	// nanos, when set, shifts the time of the partAt event by the run
	// count in nanoseconds instead of renaming it: a difference the text,
	// which prints microseconds, does not show.
	nanos bool
}

func (l *leaky) Name() string { return "leaky" }

func (l *leaky) Run(seed uint64, options RunOptions) Result {
	l.runs++
	trace := kernel.NewTrace(options.Trace)
	owner := kernel.NewProcess("n1")
	lines := l.lines
	if l.extra && l.runs > 1 {
		lines++
	}
	for i := 1; i <= lines; i++ {
		at, label := int64(i)*1_000_000, fmt.Sprintf("step-%d", i)
		if i == l.partAt && l.nanos {
			at += int64(l.runs)
		} else if i == l.partAt {
			label = fmt.Sprintf("run-%d", l.runs)
		}
		trace.Event(at, owner, label)
	}
	return Result{Seed: seed, TraceHash: trace.Hash(), Steps: uint64(lines)}
}

// steady is the same workload without the leak.
type steady struct{ leaky }

func (s *steady) Run(seed uint64, options RunOptions) Result {
	s.runs = 0
	return s.leaky.Run(seed, options)
}

// equal fails the test when got is not want.
func equal[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("%s (-want +got):\n%s", what, diff)
	}
}

// contains fails the test when text lacks part.
func contains(t *testing.T, text, part string) {
	t.Helper()
	if !strings.Contains(text, part) {
		t.Fatalf("missing %q in:\n%s", part, text)
	}
}

func runOf(w Workload, seed uint64) func(RunOptions) Result {
	return func(o RunOptions) Result { return w.Run(seed, o) }
}

func TestRunTwiceFindsTheFirstLineTheRunsPartAt(t *testing.T) {
	w := &leaky{lines: 40, partAt: 23}
	result, d := RunTwice(runOf(w, 5), RunOptions{})
	if d == nil {
		t.Fatal("no divergence found between two runs that differ")
	}
	equal(t, "seed", result.Seed, uint64(5))
	equal(t, "parting line", d.Line, 23)
	equal(t, "line counts", d.Lines, [2]int{40, 40})
	equal(t, "lines before", d.Before, []string{"0.015000 n1 step-15", "0.016000 n1 step-16", "0.017000 n1 step-17",
		"0.018000 n1 step-18", "0.019000 n1 step-19", "0.020000 n1 step-20", "0.021000 n1 step-21", "0.022000 n1 step-22"})
	equal(t, "first run after", d.After[0], []string{"0.023000 n1 run-1", "0.024000 n1 step-24", "0.025000 n1 step-25",
		"0.026000 n1 step-26", "0.027000 n1 step-27", "0.028000 n1 step-28", "0.029000 n1 step-29", "0.030000 n1 step-30"})
	equal(t, "second run's parting line", d.After[1][0], "0.023000 n1 run-2")
	if d.Results[0].TraceHash == d.Results[1].TraceHash {
		t.Fatalf("both runs hash to %s", d.Results[0].TraceHash)
	}

	var out strings.Builder
	d.Write(&out)
	text := out.String()
	contains(t, text, "the two runs part at trace line 23 (the first run wrote 40 lines, the second 40)\n")
	contains(t, text, "      22  0.022000 n1 step-22\nrun 1:\n1     23  0.023000 n1 run-1\n")
	contains(t, text, "run 2:\n2     23  0.023000 n1 run-2\n")
}

func TestResultDifferencesNameWhatDiffers(t *testing.T) {
	a := Result{Seed: 3, Options: []Option{Opt("nodes", 3)}, Stats: []Option{Opt("ops", 438), Opt("sends", 70), Opt("unclean_elections", 3)}, TraceHash: "aa"}
	b := Result{Seed: 3, Options: []Option{Opt("nodes", 3)}, Stats: []Option{Opt("ops", 440), Opt("sends", 70), Opt("faults", 2)}, TraceHash: "bb", Check: "lost-write"}
	equal(t, "differences", resultDifferences(a, b), `ops=438/440 unclean_elections=3/- result=pass/fail trace=aa/bb faults=-/2 check=-/lost-write detail=-/""`)
	equal(t, "no differences", resultDifferences(a, a), "")
}

func TestRunTwiceNearTheStartKeepsWhatContextThereIs(t *testing.T) {
	d := divergenceOf([]string{"a", "b", "x"}, []string{"a", "b", "y", "z"})
	equal(t, "parting line", d.Line, 3)
	equal(t, "before", d.Before, []string{"a", "b"})
	equal(t, "after", d.After, [2][]string{{"x"}, {"y", "z"}})
}

func TestRunTwiceWhenOneTraceRunsLonger(t *testing.T) {
	w := &leaky{lines: 12, extra: true}
	_, d := RunTwice(runOf(w, 1), RunOptions{})
	if d == nil {
		t.Fatal("no divergence found between two runs that differ")
	}
	equal(t, "parting line", d.Line, 13)
	equal(t, "line counts", d.Lines, [2]int{12, 13})
	equal(t, "after", d.After, [2][]string{nil, {"0.013000 n1 step-13"}})
	var out strings.Builder
	d.Write(&out)
	contains(t, out.String(), "run 1: (its trace ends here)\n")
}

func TestRunTwiceSaysWhenTheTextsAgreeButTheHashesDoNot(t *testing.T) {
	w := &leaky{lines: 10, partAt: 4, nanos: true}
	_, d := RunTwice(runOf(w, 1), RunOptions{})
	if d == nil {
		t.Fatal("no divergence found between two runs whose hashes differ")
	}
	equal(t, "parting line", d.Line, 0)
	var out strings.Builder
	d.Write(&out)
	contains(t, out.String(), "agree line for line (10 lines)")
}

func TestRunTwiceWhenOneTraceIsEmpty(t *testing.T) {
	d := divergenceOf(lines(""), lines("0.001000 n1 step-1\n"))
	equal(t, "parting line", d.Line, 1)
	equal(t, "line counts", d.Lines, [2]int{0, 1})
	equal(t, "after", d.After, [2][]string{nil, {"0.001000 n1 step-1"}})
	var out strings.Builder
	d.Write(&out)
	contains(t, out.String(), "the first run wrote 0 lines, the second 1")
	contains(t, out.String(), "run 1: (its trace ends here)\n")
	equal(t, "two empty traces", divergenceOf(lines(""), lines("")).Line, 0)
}

func TestRunTwiceOfADeterministicRun(t *testing.T) {
	w := &steady{leaky{lines: 30, partAt: 7}}
	result, d := RunTwice(runOf(w, 9), RunOptions{})
	if d != nil {
		t.Fatalf("a deterministic run was found to part at line %d", d.Line)
	}
	equal(t, "seed", result.Seed, uint64(9))
	equal(t, "steps", result.Steps, uint64(30))
}

func TestTwiceFailsANondeterministicSeed(t *testing.T) {
	result := Twice(&leaky{lines: 10, partAt: 3}).Run(4, RunOptions{})
	equal(t, "check", result.Check, CheckNondeterministic)
	contains(t, result.Detail, "two runs of seed 4 differ")

	passed := Twice(&steady{leaky{lines: 10, partAt: 3}}).Run(4, RunOptions{})
	equal(t, "check", passed.Check, "")
	equal(t, "trace hash", passed.TraceHash, (&steady{leaky{lines: 10, partAt: 3}}).Run(4, RunOptions{}).TraceHash)
}

func TestASweepWithTwiceCountsTheNondeterministicSeeds(t *testing.T) {
	summary := Sweep(Twice(&leaky{lines: 5, partAt: 2}), SeedRange{1, 3}, SweepOptions{Workers: 1, KeepGoing: true})
	equal(t, "failed", summary.Failed, uint64(3))
	equal(t, "failures by check", summary.FailuresByCheck, map[string]uint64{CheckNondeterministic: 3})
	equal(t, "first failure", summary.FirstFailure.Seed, uint64(1))
}
