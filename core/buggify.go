package core

import "sort"

// Buggify switches on BUGGIFY-style sites: places in core that, only in the
// simulator, do something legal but unusual (fire a timeout early, return a
// short read, delay a sync) to shake out code that relies on the common case.
// As in FoundationDB, each site is enabled or not for a whole run, and an
// enabled site fires at a fixed chance each time it is reached.
//
// A nil *Buggify is off: every method is safe on nil and Hit reports false.
type Buggify struct {
	entropy      Entropy
	enableChance float64
	fireChance   float64
	enabled      map[string]bool
	// quiet sites are drawn for as before but never fire (see Quiet).
	quiet   map[string]bool
	reached map[string]int
	fired   map[string]int
}

// NewBuggify returns sites that are each enabled with probability
// enableChance on first reach, then fire with probability fireChance.
func NewBuggify(e Entropy, enableChance, fireChance float64) *Buggify {
	return &Buggify{
		entropy:      e,
		enableChance: enableChance,
		fireChance:   fireChance,
		enabled:      map[string]bool{},
		quiet:        map[string]bool{},
		reached:      map[string]int{},
		fired:        map[string]int{},
	}
}

// Disable switches sites off for the whole run, whatever the chances say:
// they are still counted as reached but never fire. A test whose clock
// moves only when it says uses this for sites that wait on a timer (a
// delayed sync would wait forever).
func (b *Buggify) Disable(sites ...string) {
	if b == nil {
		return
	}
	for _, site := range sites {
		b.enabled[site] = false
	}
}

// Quiet stops sites from firing from now on, as a simulator's liveness
// phase heals its faults, while every draw they make stays what it would
// have been: Hit still decides and rolls for them, so the rest of the
// run's randomness (which shares the entropy) is not moved.
func (b *Buggify) Quiet(sites ...string) {
	if b == nil {
		return
	}
	for _, site := range sites {
		b.quiet[site] = true
	}
}

// Hit reports whether the site should misbehave this time.
func (b *Buggify) Hit(site string) bool {
	if b == nil {
		return false
	}
	b.reached[site]++
	on, decided := b.enabled[site]
	if !decided {
		on = RandomChance(b.entropy, b.enableChance)
		b.enabled[site] = on
	}
	if !on || !RandomChance(b.entropy, b.fireChance) || b.quiet[site] {
		return false
	}
	b.fired[site]++
	return true
}

// SiteCount is how often one site was reached and fired.
type SiteCount struct {
	Site    string
	Reached int
	Fired   int
}

// Counts lists every site reached, sorted by name, for coverage reports.
func (b *Buggify) Counts() []SiteCount {
	if b == nil {
		return nil
	}
	sites := make([]string, 0, len(b.reached))
	for site := range b.reached {
		sites = append(sites, site)
	}
	sort.Strings(sites)
	counts := make([]SiteCount, 0, len(sites))
	for _, site := range sites {
		counts = append(counts, SiteCount{Site: site, Reached: b.reached[site], Fired: b.fired[site]})
	}
	return counts
}
