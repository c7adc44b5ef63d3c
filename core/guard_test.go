package core_test

import (
	"testing"

	"sluice/internal/guard"
)

// TestCoreIsDeterministic holds every non-test package under core/ to the
// rules in core's doc comment: no goroutines, select, locks, OS, network,
// global randomness, wall clock or process-global logging, and no map
// iteration whose order could reach an output. The analysis is type-checked
// (see sluice/internal/guard); test files are not checked, since tests may
// drive the code with whatever they need.
func TestCoreIsDeterministic(t *testing.T) {
	findings, err := guard.Check("sluice/core/...")
	if err != nil {
		t.Fatal(err)
	}
	for _, finding := range findings {
		t.Error(finding)
	}
}
