package sim

import "testing"

// TestBuggifyChancesAreDrawnWithinBounds: about half the seeds switch
// BUGGIFY off (a zero chance is off: its machines get no sites), and those
// that switch it on draw both chances at most BuggifyChanceDrawMax; the
// same seed draws the same chances.
func TestBuggifyChancesAreDrawnWithinBounds(t *testing.T) {
	const seeds = 200
	off := 0
	for seed := uint64(1); seed <= seeds; seed++ {
		c := DrawBuggifyChances(seed)
		if c != DrawBuggifyChances(seed) {
			t.Fatalf("seed %d drew %v, then something else", seed, c)
		}
		if c.Enable <= 0 || c.Fire <= 0 {
			off++
			if c.New(seed, "n1") != nil {
				t.Fatalf("seed %d drew BUGGIFY off, yet its machine gets sites", seed)
			}
			continue
		}
		if c.Enable > BuggifyChanceDrawMax || c.Fire > BuggifyChanceDrawMax {
			t.Fatalf("seed %d drew chances %+v; want each at most %v", seed, c, BuggifyChanceDrawMax)
		}
	}
	if off < seeds/4 || off > 3*seeds/4 {
		t.Fatalf("%d of %d seeds drew BUGGIFY off; want about half", off, seeds)
	}
}
