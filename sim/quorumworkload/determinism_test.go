package quorumworkload_test

import (
	"testing"

	"sluice/internal/guard"
)

// TestQuorumWorkloadIsDeterministic holds this package to core's rules (no
// goroutines, clocks, global randomness or map order reaching behaviour):
// the workload's every choice must replay from the seed.
func TestQuorumWorkloadIsDeterministic(t *testing.T) {
	findings, err := guard.Check("sluice/sim/quorumworkload")
	if err != nil {
		t.Fatal(err)
	}
	for _, finding := range findings {
		t.Error(finding)
	}
}
