package core_test

import (
	"testing"

	"sluice/core"
)

// fixedEntropy always returns the same number.
type fixedEntropy struct{}

func (fixedEntropy) Uint64() uint64 { return 0 }

func TestDisabledSiteIsReachedButNeverFires(t *testing.T) {
	b := core.NewBuggify(fixedEntropy{}, 1, 1)
	b.Disable(core.BuggifyLogSyncDelayed)
	for range 3 {
		if b.Hit(core.BuggifyLogSyncDelayed) {
			t.Fatal("a disabled site fired")
		}
		if !b.Hit(core.BuggifyLogReadSmallChunks) {
			t.Fatal("a site that is not disabled did not fire at chance 1")
		}
	}
	want := []core.SiteCount{
		{Site: core.BuggifyLogReadSmallChunks, Reached: 3, Fired: 3},
		{Site: core.BuggifyLogSyncDelayed, Reached: 3, Fired: 0},
	}
	got := b.Counts()
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("counts %+v, want %+v", got, want)
	}
	var off *core.Buggify
	off.Disable(core.BuggifyLogSyncDelayed) // safe on nil, as every method
}
