package sim

import (
	"fmt"
	"slices"
	"strings"
)

// Coverage is what one run reached of the fault paths and BUGGIFY sites:
// counts a sweep sums, so its summary can name what no seed reached.
type Coverage struct {
	// Known are every fault kind and site the workload can reach, so a
	// sum can say which ones stayed at zero.
	KnownFaults, KnownSites []string
	// Faults counts the faults applied, by kind.
	Faults map[string]uint64
	// SitesReached and SitesFired count how often each BUGGIFY site was
	// reached, and how often it misbehaved, summed over the nodes.
	SitesReached, SitesFired map[string]uint64
}

// NewCoverage returns empty counts over the known fault kinds and sites.
func NewCoverage(knownFaults, knownSites []string) *Coverage {
	return &Coverage{
		KnownFaults:  slices.Clone(knownFaults),
		KnownSites:   slices.Clone(knownSites),
		Faults:       map[string]uint64{},
		SitesReached: map[string]uint64{},
		SitesFired:   map[string]uint64{},
	}
}

// Add sums another run's coverage into c.
func (c *Coverage) Add(other *Coverage) {
	if other == nil {
		return
	}
	for _, k := range other.KnownFaults {
		if !slices.Contains(c.KnownFaults, k) {
			c.KnownFaults = append(c.KnownFaults, k)
		}
	}
	for _, s := range other.KnownSites {
		if !slices.Contains(c.KnownSites, s) {
			c.KnownSites = append(c.KnownSites, s)
		}
	}
	for k, n := range other.Faults {
		c.Faults[k] += n
	}
	for s, n := range other.SitesReached {
		c.SitesReached[s] += n
	}
	for s, n := range other.SitesFired {
		c.SitesFired[s] += n
	}
}

// NeverReached lists the known fault kinds never applied ("fault:pause")
// and the known sites never reached ("buggify:quorum-...") or reached but
// never fired ("buggify-fired:..."), sorted.
func (c *Coverage) NeverReached() []string {
	var missed []string
	for _, k := range c.KnownFaults {
		if c.Faults[k] == 0 {
			missed = append(missed, "fault:"+k)
		}
	}
	for _, s := range c.KnownSites {
		switch {
		case c.SitesReached[s] == 0:
			missed = append(missed, "buggify:"+s)
		case c.SitesFired[s] == 0:
			missed = append(missed, "buggify-fired:"+s)
		}
	}
	slices.Sort(missed)
	return missed
}

// Line is the coverage summary a sweep prints: every count, then what was
// never reached.
func (c *Coverage) Line() string {
	var b strings.Builder
	b.WriteString("coverage:")
	for _, k := range sortedKeys(c.Faults) {
		fmt.Fprintf(&b, " fault_%s=%d", k, c.Faults[k])
	}
	for _, s := range sortedKeys(c.SitesReached) {
		fmt.Fprintf(&b, " buggify_%s=%d/%d", s, c.SitesFired[s], c.SitesReached[s])
	}
	if missed := c.NeverReached(); len(missed) > 0 {
		b.WriteString("\nnever reached: " + strings.Join(missed, ", "))
	} else {
		b.WriteString("\nnever reached: nothing")
	}
	return b.String()
}

func sortedKeys(m map[string]uint64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
