package clusterworkload

import (
	"runtime/debug"
	"testing"

	"sluice/sim"
)

// BenchmarkRun measures whole seeds of the default scenario: ns/op is the
// cost of one seed, at the GOGC a sweep uses. Compare it against a baseline
// built in the same run (benchstat), never against a fixed figure.
func BenchmarkRun(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(800))
	b.ReportAllocs()
	w := New()
	seed := uint64(1)
	for b.Loop() {
		w.Run(seed, sim.RunOptions{})
		seed++
	}
}
