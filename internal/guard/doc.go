// Package guard is the tooling behind two tests that keep core/ honest:
// TestCoreIsDeterministic (core/guard_test.go) and TestCoreImportsOnlyAllowed
// (core/deps_test.go).
//
// What it owns:
//   - Check: a type-checked analysis of Go packages that reports every
//     construct that would let the outside world or Go's randomized
//     scheduling and map order leak into a deterministic state machine:
//     go and select statements, forbidden imports (sync, os, net, math/rand,
//     ...), wall-clock and timer functions of package time, process-global
//     output (package log, slog's default logger, fmt.Print, println), and
//     ranging over maps unless the loop is the collect-keys-then-sort idiom
//     or carries an "order-independent: <reason>" comment.
//   - ImportGraph: the import edges of packages and all their dependencies,
//     as the go command reports them, so a test can hold the import graph
//     to the architecture.
//
// What it must never do: guess. Every rule that names a function or a map
// resolves identifiers through go/types, so an alias import (t "time"), a
// dot import or a function value (f := time.Now) is still caught, and a
// local function named Now, a string holding "time.Now()" or a comment
// mentioning "go func" is not. A package that does not load or type-check
// is an error, never a pass; so is a pattern that matches nothing.
//
// Limits: only non-test files are checked (test files may use goroutines,
// os and the wall clock to drive the code under test), and only the files
// selected by the current GOOS, GOARCH and build tags.
//
// Start reading with Check (check.go), then the rules one file each:
// imports.go, uses.go, map_range.go with order_comments.go. The dependency
// side is import_graph.go.
//
// guard is tooling, not core: it may use os, the go command and
// golang.org/x/tools/go/packages freely.
package guard
