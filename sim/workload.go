package sim

import (
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// Workload is one kind of simulated run: it builds a world from a seed,
// drives it through a safety phase and a liveness phase, and judges the
// history it recorded. Run must be a pure function of (seed, options): no
// wall clock, no goroutines, no global randomness, no map order reaching
// anything it does.
type Workload interface {
	Name() string
	Run(seed uint64, options RunOptions) Result
}

// RunOptions are the choices a user makes on top of a seed.
type RunOptions struct {
	// Canaries names planted bugs to switch on (see Canary).
	Canaries []string

	// Profile, when set, leans every seed's draw the way the named
	// canary's runs lean, without planting the bug: a sweep of the region
	// where that bug had to be looked for (the cluster workload's
	// profiles; a fifth of a plain sweep's seeds take one at random).
	Profile string

	// Trace, when set, receives the event trace as text.
	Trace io.Writer

	// Record asks the workload for a Recording of the run (Result.
	// Recording), what a report draws. Workloads that keep none ignore
	// it.
	Record bool

	// LogLevel, when set, is the lowest level of core's log lines the
	// trace carries, in place of the workload's own (warnings for the
	// cluster workload, info for the others). Debug lines say what every
	// append and fetch did, for following one seed; they slow a run down
	// and, being part of the trace, change its hash.
	LogLevel *slog.Level

	// SearchSteps, when not zero, is the budget of each of the checker's
	// linearizability searches in place of its default
	// (checker.Options.SearchSteps): more to decide a run whose search
	// ran out (check "inconclusive"). It is part of the run: a verdict
	// it changes changes the trace. Workloads without such searches
	// ignore it.
	SearchSteps int
}

// LogLevelOr is the level core's logs go to the trace at: options.LogLevel
// when set, otherwise the workload's default.
func (o RunOptions) LogLevelOr(workloadDefault slog.Level) slog.Level {
	if o.LogLevel != nil {
		return *o.LogLevel
	}
	return workloadDefault
}

// Result is one run's outcome.
type Result struct {
	Seed uint64

	// Options are the settings drawn from the seed, in a stable order,
	// printed so a reader sees what the seed chose.
	Options []Option

	// Check names the violated check; empty when the run passed.
	Check string
	// Detail says how it was violated.
	Detail string

	TraceHash string
	SimTime   time.Duration
	Steps     uint64

	// Stats are counts the workload reports (operations, faults...),
	// in a stable order.
	Stats []Option

	// Coverage counts the fault kinds and BUGGIFY sites the run reached;
	// nil from a workload that does not count them.
	Coverage *Coverage

	// Recording is what the run saw, when RunOptions.Record asked for it
	// and the workload keeps one; nil otherwise.
	Recording *Recording
}

// Option is one name=value pair of a result.
type Option struct {
	Name  string
	Value string
}

// Opt formats an option.
func Opt(name string, value any) Option {
	return Option{Name: name, Value: fmt.Sprint(value)}
}

// Stat is one of the result's integer stats by name, and whether the
// result lists it (fault_crash is listed only when a crash happened).
func (r Result) Stat(name string) (int64, bool) {
	for _, o := range r.Stats {
		if o.Name == name {
			n, err := strconv.ParseInt(o.Value, 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// Option is one of the result's options (what the seed drew) by name, and
// whether the result lists it.
func (r Result) Option(name string) (string, bool) {
	for _, o := range r.Options {
		if o.Name == name {
			return o.Value, true
		}
	}
	return "", false
}

// Passed reports whether every check held.
func (r Result) Passed() bool { return r.Check == "" }

// Line is the one-line summary `sluice sim` prints for a seed:
// seed=7 <options> result=pass trace=<hash>.
func (r Result) Line() string {
	var b strings.Builder
	for i, pair := range r.pairs() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(pair.Name)
		b.WriteByte('=')
		b.WriteString(pair.Value)
	}
	return b.String()
}

// pairs are the name=value pairs of the result's line, in order.
func (r Result) pairs() []Option {
	pairs := make([]Option, 0, len(r.Options)+len(r.Stats)+7)
	pairs = append(pairs, Opt("seed", r.Seed))
	pairs = append(pairs, r.Options...)
	pairs = append(pairs, r.Stats...)
	pairs = append(pairs, Opt("sim_time", r.SimTime.Round(time.Millisecond)), Opt("steps", r.Steps))
	if r.Passed() {
		pairs = append(pairs, Opt("result", "pass"))
	} else {
		pairs = append(pairs, Opt("result", "fail"), Opt("check", r.Check), Option{Name: "detail", Value: strconv.Quote(r.Detail)})
	}
	return append(pairs, Opt("trace", r.TraceHash))
}

// Canary is a planted bug: its name (the switch core checks), the workload
// expected to catch it, and the number of consecutive seeds within which it
// must be caught.
type Canary struct {
	Name        string
	Workload    string
	Description string
	SeedsMax    int
	// Twice marks a bug that changes no outcome, only the order in which
	// things happen: every check of one run passes, and it is caught by
	// running each seed twice (Twice, `sluice sim --determinism`), with
	// CheckNondeterministic.
	Twice bool
}

// CatchingWorkload is w as the canary must be run to be caught: twice per
// seed for a Twice canary, as it is otherwise.
func (c Canary) CatchingWorkload(w Workload) Workload {
	if c.Twice {
		return Twice(w)
	}
	return w
}
