package clusterworkload

import (
	"testing"

	"sluice/sim"
)

// BenchmarkRun measures whole seeds of the default scenario: ns/op is the
// cost of one seed, with the collector set as a sweep of one worker sets
// it. Compare it against a baseline built in the same run (benchstat),
// never against a fixed figure.
func BenchmarkRun(b *testing.B) {
	defer sim.CollectLikeASweep(1)()
	b.ReportAllocs()
	w := New()
	seed := uint64(1)
	for b.Loop() {
		w.Run(seed, sim.RunOptions{})
		seed++
	}
}
