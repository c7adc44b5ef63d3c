package checker

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"sluice/jepsen/history"
)

// examplesMax bounds the examples a class keeps: enough to start debugging
// from, few enough that a report of a badly broken run stays readable.
const examplesMax = 8

// opsPerFindingMax bounds the op indexes one finding names; a value polled
// by hundreds of consumers would otherwise list them all.
const opsPerFindingMax = 12

// Status says what a finding means for the run.
type Status uint8

const (
	// Failure breaks a promise the configuration makes.
	Failure Status = iota + 1
	// Permitted is a loss the configuration is allowed
	// (Options.LossPermitted, Options.LossySenders), or records retention
	// deleted (Options.Deleted).
	Permitted
	// Informational is reported but judges nothing: unseen values without
	// a final drain.
	Informational
)

var statusNames = [...]string{Failure: "failure", Permitted: "permitted", Informational: "informational"}

func (s Status) String() string {
	if s >= Failure && s <= Informational {
		return statusNames[s]
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

// Finding is one occurrence of an anomaly.
type Finding struct {
	Anomaly Anomaly
	Status  Status
	// Partition is the partition concerned; zero for a finding about a
	// group as a whole.
	Partition history.TopicPartition
	// Group is the consumer group concerned, if any.
	Group string
	// Ops are the indexes of the ops involved (completions, where an
	// operation completed), ascending, at most opsPerFindingMax.
	Ops []int
	// Detail says what happened, in a sentence that names values and
	// offsets.
	Detail string
}

func (f Finding) String() string {
	var b strings.Builder
	b.WriteString(f.Status.String())
	if f.Group != "" {
		fmt.Fprintf(&b, " group=%q", f.Group)
	}
	if f.Partition.Topic != "" {
		fmt.Fprintf(&b, " %s", f.Partition)
	}
	fmt.Fprintf(&b, " ops=%v: %s", f.Ops, f.Detail)
	return b.String()
}

// Class sums up one anomaly class.
type Class struct {
	Anomaly       Anomaly
	Count         int // Failures + Permitted + Informational
	Failures      int
	Permitted     int
	Informational int
	// Examples are the first findings in report order: failures first,
	// then by partition, group and ops; at most examplesMax.
	Examples []Finding
}

// Inconclusive is a linearizability check porcupine could not finish
// within its budget: neither a pass nor a failure.
type Inconclusive struct {
	Anomaly   Anomaly
	Partition history.TopicPartition
	Group     string
	Detail    string
}

func (i Inconclusive) String() string {
	var b strings.Builder
	b.WriteString(string(i.Anomaly))
	if i.Group != "" {
		fmt.Fprintf(&b, " group=%q", i.Group)
	}
	fmt.Fprintf(&b, " %s: %s", i.Partition, i.Detail)
	return b.String()
}

// Verdict is a report's conclusion.
type Verdict string

const (
	// Pass: every check ran to the end and nothing failed.
	Pass Verdict = "pass"
	// Fail: some finding is a failure, or the history was malformed.
	Fail Verdict = "fail"
	// Unknown: nothing failed, but some linearizability check ran out of
	// budget. Never to be read as a pass.
	Unknown Verdict = "unknown"
)

// Report is the judgement of a history by one or more checkers.
type Report struct {
	Verdict Verdict
	// Valid is Verdict == Pass.
	Valid bool
	// Ops is the length of the history judged.
	Ops int
	// Classes has one entry per anomaly class checked, zero counts
	// included, sorted by name.
	Classes []Class
	// Inconclusive lists linearizability checks that ran out of budget,
	// sorted.
	Inconclusive []Inconclusive
	// Error says why the history or the options could not be checked at
	// all; the verdict is then Fail.
	Error string
}

// Class returns the summary of one anomaly class, and whether it was
// checked.
func (r Report) Class(anomaly Anomaly) (Class, bool) {
	for _, class := range r.Classes {
		if class.Anomaly == anomaly {
			return class, true
		}
	}
	return Class{}, false
}

// Failures counts the findings that are failures, over every class.
func (r Report) Failures() int {
	total := 0
	for _, class := range r.Classes {
		total += class.Failures
	}
	return total
}

// Summary is the report on one line: the verdict, the ops checked, and
// every class with findings, as in
//
//	verdict=fail ops=1200 lost-write=2 unseen=5(informational=5) inconclusive=1
func (r Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "verdict=%s ops=%d", r.Verdict, r.Ops)
	for _, class := range r.Classes {
		if class.Count == 0 {
			continue
		}
		fmt.Fprintf(&b, " %s=%d", class.Anomaly, class.Count)
		var notFailures []string
		if class.Permitted > 0 {
			notFailures = append(notFailures, fmt.Sprintf("permitted=%d", class.Permitted))
		}
		if class.Informational > 0 {
			notFailures = append(notFailures, fmt.Sprintf("informational=%d", class.Informational))
		}
		if len(notFailures) > 0 {
			fmt.Fprintf(&b, "(%s)", strings.Join(notFailures, ","))
		}
	}
	if len(r.Inconclusive) > 0 {
		fmt.Fprintf(&b, " inconclusive=%d", len(r.Inconclusive))
	}
	if r.Error != "" {
		fmt.Fprintf(&b, " error=%q", r.Error)
	}
	return b.String()
}

// String renders the whole report: the summary line, then each class with
// findings and its examples, then the inconclusive checks. The text
// depends only on the history and options checked.
func (r Report) String() string {
	var b strings.Builder
	b.WriteString(r.Summary())
	b.WriteByte('\n')
	for _, class := range r.Classes {
		if class.Count == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s: count=%d failures=%d permitted=%d informational=%d\n",
			class.Anomaly, class.Count, class.Failures, class.Permitted, class.Informational)
		for _, example := range class.Examples {
			fmt.Fprintf(&b, "  %s\n", example)
		}
		if hidden := class.Count - len(class.Examples); hidden > 0 {
			fmt.Fprintf(&b, "  ... and %d more\n", hidden)
		}
	}
	for _, inconclusive := range r.Inconclusive {
		fmt.Fprintf(&b, "inconclusive %s\n", inconclusive)
	}
	return b.String()
}

// newReport sums findings up into classes, one per checked anomaly.
func newReport(ops int, checked []Anomaly, findings []Finding, inconclusive []Inconclusive) Report {
	slices.SortFunc(findings, compareFindings)
	report := Report{Ops: ops}
	checked = slices.Clone(checked)
	slices.Sort(checked)
	checked = slices.Compact(checked)
	for _, anomaly := range checked {
		class := Class{Anomaly: anomaly}
		for _, finding := range findings {
			if finding.Anomaly != anomaly {
				continue
			}
			class.Count++
			switch finding.Status {
			case Failure:
				class.Failures++
			case Permitted:
				class.Permitted++
			case Informational:
				class.Informational++
			default:
				panic(fmt.Sprintf("checker: %s finding without a status: %s", anomaly, finding.Detail))
			}
			if len(class.Examples) < examplesMax {
				class.Examples = append(class.Examples, finding)
			}
		}
		report.Classes = append(report.Classes, class)
	}
	for _, finding := range findings {
		if !slices.Contains(checked, finding.Anomaly) {
			panic(fmt.Sprintf("checker: finding of unchecked anomaly %s", finding.Anomaly))
		}
	}
	report.Inconclusive = slices.Clone(inconclusive)
	slices.SortFunc(report.Inconclusive, func(a, b Inconclusive) int {
		return cmp.Or(
			strings.Compare(string(a.Anomaly), string(b.Anomaly)),
			strings.Compare(a.Group, b.Group),
			a.Partition.Compare(b.Partition),
			strings.Compare(a.Detail, b.Detail))
	})
	switch {
	case report.Failures() > 0:
		report.Verdict = Fail
	case len(report.Inconclusive) > 0:
		report.Verdict = Unknown
	default:
		report.Verdict = Pass
	}
	report.Valid = report.Verdict == Pass
	return report
}

// errorReport is the report on a history or options that could not be
// checked at all.
func errorReport(ops int, checked []Anomaly, err error) Report {
	report := newReport(ops, checked, nil, nil)
	report.Error = err.Error()
	report.Verdict = Fail
	report.Valid = false
	return report
}

func compareFindings(a, b Finding) int {
	return cmp.Or(
		cmp.Compare(a.Status, b.Status),
		a.Partition.Compare(b.Partition),
		strings.Compare(a.Group, b.Group),
		slices.Compare(a.Ops, b.Ops),
		strings.Compare(a.Detail, b.Detail))
}

// opListPreferring is opList where the cap keeps every op of preferred
// before any of the rest: the first witness of each value or position
// matters more than a fifth reader of the same one.
func opListPreferring(preferred, rest []int) []int {
	var chosen []int
	for _, op := range slices.Concat(preferred, rest) {
		if len(chosen) == opsPerFindingMax {
			break
		}
		if !slices.Contains(chosen, op) {
			chosen = append(chosen, op)
		}
	}
	return opList(chosen...)
}

// opList turns op indexes into a finding's Ops: ascending, without
// repeats, at most opsPerFindingMax. The lowest indexes are kept: they
// are where the story starts.
func opList(indexes ...int) []int {
	list := slices.Clone(indexes)
	slices.Sort(list)
	list = slices.Compact(list)
	if len(list) > opsPerFindingMax {
		list = list[:opsPerFindingMax]
	}
	return list
}
