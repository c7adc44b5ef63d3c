package simclient_test

import (
	"testing"

	"sluice/internal/guard"
)

// TestSimclientIsDeterministic holds this package to core's rules (no
// goroutines, clocks, global randomness or map order reaching behaviour):
// a client's every choice must replay from the seed.
func TestSimclientIsDeterministic(t *testing.T) {
	findings, err := guard.Check("sluice/sim/simclient")
	if err != nil {
		t.Fatal(err)
	}
	for _, finding := range findings {
		t.Error(finding)
	}
}
