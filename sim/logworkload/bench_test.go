package logworkload

import (
	"testing"

	"sluice/sim"
)

// BenchmarkRun measures whole seeds: ns/op is the cost of one seed.
func BenchmarkRun(b *testing.B) {
	w := New()
	seed := uint64(1)
	for b.Loop() {
		w.Run(seed, sim.RunOptions{})
		seed++
	}
}
