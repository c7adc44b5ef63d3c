package checker

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"
)

// returnTimeUnknown is the return time given to an operation whose outcome
// is unknown (info, or still running when the history ended): it may take
// effect at any moment after its invoke, or never, which porcupine
// expresses as an operation that never returns and is linearized last,
// after everything that could observe it.
const returnTimeUnknown = math.MaxInt64

// leftOutReportedMax bounds how many operations missing from the longest
// linearizable prefix a finding names.
const leftOutReportedMax = 3

// search is one linearizability check: a model and the operations of one
// partition (or one group's partition). Each operation's input names the
// history op the operation stands for (searchInput); its Metadata is set
// to that op's index only for a visualization, as boxing an index in an
// interface for every operation of every search was an allocation each.
type search struct {
	model      porcupine.Model
	operations []porcupine.Operation
}

// searchInput is an operation's input, in either model: it knows the
// history index of the op that names the operation.
type searchInput interface{ historyOp() int }

// historyOp is the history index of the op that names operation.
func historyOp(operation porcupine.Operation) int {
	return operation.Input.(searchInput).historyOp()
}

// searchOutcome is what a search found.
type searchOutcome struct {
	result porcupine.CheckResult
	// For an Illegal result: the length of the longest linearizable
	// prefix the search found, and the history indexes of the first
	// operations (by call time, those with known return times) it could
	// not fit after it: where to start looking.
	linearized int
	leftOut    []int
	// For an Unknown result: which budget ran out, for a reader.
	budget string
}

// addOperation appends an operation, numbering its process densely later.
func (s *search) addOperation(process int, call, ret int64, input searchInput, output any) {
	s.operations = append(s.operations, porcupine.Operation{
		ClientId: process, Input: input, Output: output, Call: call, Return: ret,
	})
}

// run decides whether the operations linearize, within budget:
// linearizes first (see quick_search.go), then, unless it found a
// linearization, decide (deciding_search.go).
func (s *search) run(budget searchBudget) searchOutcome {
	if s.linearizes() {
		return searchOutcome{result: porcupine.Ok}
	}
	d := s.decide(budget)
	outcome := searchOutcome{result: d.result}
	switch d.result {
	case porcupine.Illegal:
		outcome.linearized, outcome.leftOut = len(d.longest), s.leftOut(d.longest)
	case porcupine.Unknown:
		outcome.budget = describeBudget(d, budget, len(s.operations))
	}
	return outcome
}

// leftOut lists the history ops of the operations missing from the
// longest linearizable prefix a search found (those with known return
// times, earliest called first): where to start looking.
func (s *search) leftOut(longest []int32) []int {
	included := make([]bool, len(s.operations))
	for _, id := range longest {
		included[id] = true
	}
	var missing []int
	for id, operation := range s.operations {
		if !included[id] && operation.Return != returnTimeUnknown {
			missing = append(missing, id)
		}
	}
	slices.SortFunc(missing, func(x, y int) int {
		return cmp.Or(cmp.Compare(s.operations[x].Call, s.operations[y].Call), cmp.Compare(x, y))
	})
	var ops []int
	for _, id := range missing[:min(len(missing), leftOutReportedMax)] {
		ops = append(ops, historyOp(s.operations[id]))
	}
	return ops
}

// describeIllegal is the detail of a failed search.
func (s *search) describeIllegal(outcome searchOutcome) string {
	var leftOut []string
	for _, op := range outcome.leftOut {
		for _, operation := range s.operations {
			if historyOp(operation) == op {
				leftOut = append(leftOut, fmt.Sprintf("op %d %s", op, s.model.DescribeOperation(operation.Input, operation.Output)))
				break
			}
		}
	}
	detail := fmt.Sprintf("no linearization of its %d operations exists; the longest linearizable prefix has %d",
		len(s.operations), outcome.linearized)
	if len(leftOut) > 0 {
		detail += "; first left out: " + strings.Join(leftOut, ", ")
	}
	return detail
}

// describeMetadata names an operation by its history op in porcupine's
// visualization.
func describeMetadata(metadata any) string {
	if op, ok := metadata.(int); ok {
		return fmt.Sprintf("op %d", op)
	}
	return ""
}
