package compat

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
)

// TestMain runs the tests, removes the binary they shared, and prints the
// client matrix: which client passed which check against this build.
func TestMain(m *testing.M) {
	matrix.declare(
		[]string{"franz-go", franzGoRangeColumn, "sarama", "kafka-go", "kcat", "kafkajs", sluiceCLIColumn, rawClient},
		slices.Concat([]string{availableRow}, roundTripSteps, groupSteps),
	)
	code := m.Run()
	RemoveBinary()
	matrix.print(os.Stdout)
	os.Exit(code)
}

// outcome is one cell of the matrix.
type outcome string

const (
	outcomePass    outcome = "pass"
	outcomeFail    outcome = "FAIL"
	outcomeSkip    outcome = "skip"
	outcomeNotRun  outcome = "-" // an earlier step it needs failed
	outcomeMissing outcome = ""  // the client has no such check
)

// clientMatrix records outcomes by client and check, remembering the
// order each was first seen in so the table reads like the tests.
type clientMatrix struct {
	mutex   sync.Mutex
	clients []string
	checks  []string
	cells   map[[2]string]outcome
}

var matrix = &clientMatrix{cells: map[[2]string]outcome{}}

// declare fixes the order of clients (columns) and checks (rows) known in
// advance, so the table reads the same whichever test runs first; others
// follow in the order they are first recorded.
func (m *clientMatrix) declare(clients, checks []string) {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	for _, client := range clients {
		if !slices.Contains(m.clients, client) {
			m.clients = append(m.clients, client)
		}
	}
	for _, check := range checks {
		if !slices.Contains(m.checks, check) {
			m.checks = append(m.checks, check)
		}
	}
}

func (m *clientMatrix) record(client, check string, result outcome) {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	if !slices.Contains(m.clients, client) {
		m.clients = append(m.clients, client)
	}
	if !slices.Contains(m.checks, check) {
		m.checks = append(m.checks, check)
	}
	m.cells[[2]string{client, check}] = result
}

// print writes the matrix as an aligned table, checks down, clients across.
func (m *clientMatrix) print(w io.Writer) {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	if len(m.cells) == 0 {
		return
	}
	fmt.Fprintln(w, "\nclient matrix (pass, FAIL, skip; - = not run because an earlier step failed; blank = not applicable):")
	var clients []string // only those that ran
	for _, client := range m.clients {
		for _, check := range m.checks {
			if _, ok := m.cells[[2]string{client, check}]; ok {
				clients = append(clients, client)
				break
			}
		}
	}
	table := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(table, "check\t%s\t\n", strings.Join(clients, "\t"))
	for _, check := range m.checks {
		if !slices.ContainsFunc(clients, func(client string) bool { _, ok := m.cells[[2]string{client, check}]; return ok }) {
			continue // declared, but no test that ran has it
		}
		row := []string{check}
		for _, client := range clients {
			row = append(row, string(m.cells[[2]string{client, check}]))
		}
		fmt.Fprintf(table, "%s\t\n", strings.Join(row, "\t"))
	}
	table.Flush()
}

// clientSteps runs one client's checks as subtests, recording each in the
// matrix. A failed prerequisite step blocks the steps after it, which are
// recorded as not run rather than failing again for the same reason.
type clientSteps struct {
	t       *testing.T
	client  string
	blocked string
}

func newClientSteps(t *testing.T, client string) *clientSteps {
	return &clientSteps{t: t, client: client}
}

// step runs fn as the subtest name. When prerequisite is set and the step
// does not pass, every later step is recorded as not run.
func (s *clientSteps) step(name string, prerequisite bool, fn func(t *testing.T)) bool {
	s.t.Helper()
	if s.blocked != "" {
		matrix.record(s.client, name, outcomeNotRun)
		s.t.Logf("%s: not run, because %q failed", name, s.blocked)
		return false
	}
	skipped := false
	passed := s.t.Run(name, func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		fn(t)
	})
	switch {
	case skipped:
		matrix.record(s.client, name, outcomeSkip)
	case passed:
		matrix.record(s.client, name, outcomePass)
	default:
		matrix.record(s.client, name, outcomeFail)
	}
	if prerequisite && (!passed || skipped) {
		s.blocked = name
	}
	return passed && !skipped
}

// reportProblems fails t with what a check found, if anything.
func reportProblems(t *testing.T, check string, found problems) {
	t.Helper()
	if found.total == 0 {
		return
	}
	t.Errorf("%s: %d problems; the first %d:\n  %s", check, found.total, len(found.list), strings.Join(found.list, "\n  "))
}
