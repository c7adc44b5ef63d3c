package checker_test

import (
	"testing"

	"sluice/internal/guard"
)

// TestCheckerIsDeterministic holds this package to core's rules (no
// goroutines, clocks, randomness or map order reaching an output), because
// the simulator prints its verdicts into traces it hashes. Porcupine, which
// this package calls for a visualization only, runs goroutines and reads
// the wall clock for its budget; no verdict comes from it.
func TestCheckerIsDeterministic(t *testing.T) {
	findings, err := guard.Check("sluice/jepsen/checker")
	if err != nil {
		t.Fatal(err)
	}
	for _, finding := range findings {
		t.Error(finding)
	}
}
