package history_test

import (
	"testing"

	"sluice/internal/guard"
)

// TestHistoryIsDeterministic holds this package to core's rules (no
// goroutines, clocks, randomness or map order reaching an output): the
// simulator hashes what it records.
func TestHistoryIsDeterministic(t *testing.T) {
	findings, err := guard.Check("sluice/jepsen/history")
	if err != nil {
		t.Fatal(err)
	}
	for _, finding := range findings {
		t.Error(finding)
	}
}
