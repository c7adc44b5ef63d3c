package guard

import (
	"cmp"
	"fmt"
	"go/token"
	"slices"
)

// The rules a Finding can break. Each names one way nondeterminism or the
// outside world can reach core.
const (
	// RuleGoroutine: a go statement. Core runs on its node's loop only.
	RuleGoroutine = "goroutine"
	// RuleSelect: a select statement, whose choice among ready cases is random.
	RuleSelect = "select"
	// RuleImport: an import of a package core must not use at all.
	RuleImport = "import"
	// RuleTime: a function of package time that reads the wall clock,
	// sleeps, starts a timer or depends on the machine's time zone.
	RuleTime = "time"
	// RuleGlobalOutput: output to the process (package log, slog's default
	// logger, fmt.Print, println) instead of World.Log.
	RuleGlobalOutput = "global-output"
	// RuleMapOrder: iteration in Go's randomized map order.
	RuleMapOrder = "map-order"
)

// Finding is one broken rule at one place in the source.
type Finding struct {
	Position token.Position
	Rule     string
	Message  string
}

// String formats a finding the way the go tools do, so editors can jump to it.
func (f Finding) String() string {
	return fmt.Sprintf("%s: %s: %s", f.Position, f.Rule, f.Message)
}

// sortFindings orders findings by file, line, column, then rule and message,
// so a report reads top to bottom and is the same on every run.
func sortFindings(findings []Finding) {
	slices.SortFunc(findings, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(a.Position.Filename, b.Position.Filename),
			cmp.Compare(a.Position.Line, b.Position.Line),
			cmp.Compare(a.Position.Column, b.Position.Column),
			cmp.Compare(a.Rule, b.Rule),
			cmp.Compare(a.Message, b.Message),
		)
	})
}
