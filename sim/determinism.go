package sim

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// CheckNondeterministic is the check a seed fails when two runs of it, in
// one process, differ in trace hash or result line (`sluice sim
// --determinism`). Same seed, same trace is the simulator's first promise:
// a seed that replays differently cannot be debugged by replaying it.
const CheckNondeterministic = "nondeterministic"

// divergenceContext is how many trace lines a Divergence keeps before the
// parting line, and after it from each run.
const divergenceContext = 8

// Divergence is where two runs of one seed part: the first trace line at
// which their texts differ, with the lines the two runs shared before it
// and what each run wrote from there.
type Divergence struct {
	// Line is the 1-based number of the first differing line; when one
	// trace is a prefix of the other, the line one of them lacks. It is 0
	// when the texts agree line for line: the runs differ below what the
	// text prints (times finer than its microseconds) or only in their
	// result lines.
	Line int
	// Lines is how many lines each run's trace had.
	Lines [2]int
	// Before are up to divergenceContext lines both runs wrote just
	// before Line; After, up to divergenceContext lines of each run from
	// Line on.
	Before []string
	After  [2][]string
	// Results are the two runs' results.
	Results [2]Result
}

// Twice returns w made to run every seed twice and fail the second check,
// CheckNondeterministic, when the two runs differ: what a sweep with
// --determinism runs. The first run's result stands otherwise.
func Twice(w Workload) Workload { return twice{w} }

type twice struct{ Workload }

func (t twice) Run(seed uint64, options RunOptions) Result {
	first := t.Workload.Run(seed, options)
	second := t.Workload.Run(seed, options)
	if same(first, second) {
		return first
	}
	first.Check = CheckNondeterministic
	first.Detail = fmt.Sprintf("two runs of seed %d differ: trace %s against %s, result %q against %q",
		seed, first.TraceHash, second.TraceHash, outcome(first), outcome(second))
	return first
}

// same reports whether two runs of a seed agree.
func same(a, b Result) bool { return a.TraceHash == b.TraceHash && a.Line() == b.Line() }

// outcome is a result's verdict in a word: pass, or the check it failed.
func outcome(r Result) string {
	if r.Passed() {
		return "pass"
	}
	return r.Check
}

// RunTwice makes one run twice (run is handed the options with a trace
// writer of RunTwice's own) and compares them. It returns the first run's
// result, and a Divergence when the two differ. Traces are compared as
// text, which hashes exactly what the trace hash does, so the first
// differing line is where the hashes part; core's debug lines
// (options.LogLevel) put more of what each node did into the text and so
// locate the parting more closely.
func RunTwice(run func(RunOptions) Result, options RunOptions) (Result, *Divergence) {
	var texts [2]bytes.Buffer
	var results [2]Result
	for i := range results {
		o := options
		o.Trace = &texts[i]
		results[i] = run(o)
	}
	if same(results[0], results[1]) && bytes.Equal(texts[0].Bytes(), texts[1].Bytes()) {
		return results[0], nil
	}
	d := divergenceOf(lines(texts[0].String()), lines(texts[1].String()))
	d.Results = results
	return results[0], d
}

// lines splits a trace's text into its lines.
func lines(text string) []string {
	if text == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(text, "\n"), "\n")
}

// divergenceOf finds where two traces part.
func divergenceOf(a, b []string) *Divergence {
	at := 0
	for at < len(a) && at < len(b) && a[at] == b[at] {
		at++
	}
	d := &Divergence{Line: at + 1, Lines: [2]int{len(a), len(b)}}
	if at == len(a) && at == len(b) {
		d.Line = 0
		return d
	}
	d.Before = append(d.Before, a[max(0, at-divergenceContext):at]...)
	for i, text := range [2][]string{a, b} {
		d.After[i] = append(d.After[i], text[at:min(len(text), at+divergenceContext)]...)
	}
	return d
}

// Write prints the divergence for a person: the shared lines, then each
// run's lines from the parting point, numbered, and the two result lines
// when they differ.
func (d *Divergence) Write(w io.Writer) {
	if d.Line == 0 {
		fmt.Fprintf(w, "the two runs' traces agree line for line (%d lines); they differ below what the text prints (times finer than a microsecond) or in their result lines\n", d.Lines[0])
		fmt.Fprintf(w, "the results differ in (run 1/run 2): %s\n", resultDifferences(d.Results[0], d.Results[1]))
		return
	}
	fmt.Fprintf(w, "the two runs part at trace line %d (the first run wrote %d lines, the second %d)\n", d.Line, d.Lines[0], d.Lines[1])
	first := d.Line - len(d.Before)
	for i, line := range d.Before {
		fmt.Fprintf(w, "  %6d  %s\n", first+i, line)
	}
	for run, after := range d.After {
		if len(after) == 0 {
			fmt.Fprintf(w, "run %d: (its trace ends here)\n", run+1)
			continue
		}
		fmt.Fprintf(w, "run %d:\n", run+1)
		for i, line := range after {
			fmt.Fprintf(w, "%d %6d  %s\n", run+1, d.Line+i, line)
		}
	}
	if differences := resultDifferences(d.Results[0], d.Results[1]); differences != "" {
		fmt.Fprintf(w, "the results differ in (run 1/run 2): %s\n", differences)
	}
}

// resultDifferences lists the name=value pairs of two result lines that
// differ, as name=first/second ("-" for one a line lacks), in the order
// of the first line and then the names only the second has; empty when
// the lines agree.
func resultDifferences(a, b Result) string {
	values := [2]map[string]string{{}, {}}
	var names []string
	for i, r := range [2]Result{a, b} {
		for _, pair := range r.pairs() {
			name, value := pair.Name, pair.Value
			if _, seen := values[0][name]; !seen {
				if _, seen := values[1][name]; !seen {
					names = append(names, name)
				}
			}
			values[i][name] = value
		}
	}
	var differences []string
	for _, name := range names {
		first, inFirst := values[0][name]
		second, inSecond := values[1][name]
		if first == second && inFirst == inSecond {
			continue
		}
		if !inFirst {
			first = "-"
		}
		if !inSecond {
			second = "-"
		}
		differences = append(differences, name+"="+first+"/"+second)
	}
	return strings.Join(differences, " ")
}
