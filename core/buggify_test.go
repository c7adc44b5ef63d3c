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

// countingEntropy counts its draws and returns them in turn.
type countingEntropy struct{ draws uint64 }

func (e *countingEntropy) Uint64() uint64 {
	e.draws++
	return e.draws * 0x9e3779b97f4a7c15
}

func TestQuietSiteDrawsAsBeforeButNeverFires(t *testing.T) {
	// The same sites hit in the same order, one buggify quieting a site
	// halfway: the entropy must have been drawn from as often in both,
	// and the quiet site fire in neither after the switch.
	loud, quiet := &countingEntropy{}, &countingEntropy{}
	a, b := core.NewBuggify(loud, 0.9, 0.5), core.NewBuggify(quiet, 0.9, 0.5)
	sites := []string{core.BuggifyGroupSessionShort, core.BuggifyLogSyncDelayed}
	firedBefore := 0
	for i := range 200 {
		if i == 100 {
			b.Quiet(core.BuggifyGroupSessionShort)
		}
		for _, site := range sites {
			fa, fb := a.Hit(site), b.Hit(site)
			switch {
			case i >= 100 && site == core.BuggifyGroupSessionShort && fb:
				t.Fatalf("the quiet site fired at hit %d", i)
			case (i < 100 || site != core.BuggifyGroupSessionShort) && fa != fb:
				t.Fatalf("hit %d of %s: %v and %v, want the same draws", i, site, fa, fb)
			}
			if i < 100 && fa && site == core.BuggifyGroupSessionShort {
				firedBefore++
			}
		}
	}
	if loud.draws != quiet.draws || firedBefore == 0 {
		t.Fatalf("%d and %d draws (site fired %d times before), want the same draws and some firing", loud.draws, quiet.draws, firedBefore)
	}
	var off *core.Buggify
	off.Quiet(core.BuggifyGroupSessionShort)
}
