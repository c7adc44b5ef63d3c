package sim

import (
	"fmt"
	"slices"
	"strings"

	"sluice/core"
	"sluice/sim/simdisk"
)

// Coverage is what one run reached of the fault paths and BUGGIFY sites:
// counts a sweep sums, so its summary can name what no seed reached.
//
// Every workload counts its own: it declares the fault kinds its draw can
// produce and the sites of the core packages it runs (BuggifySitesIn), and
// counts what the run applied and reached. A kind or site only another
// workload can reach is not known to it, so a sweep's "never reached"
// names only what that workload's own seeds could have reached.
type Coverage struct {
	// Known are every fault kind and site the workload can reach, so a
	// sum can say which ones stayed at zero.
	KnownFaults, KnownSites []string
	// Faults counts the faults applied, by kind.
	Faults map[string]uint64
	// SitesReached and SitesFired count how often each BUGGIFY site was
	// reached, and how often it misbehaved, summed over the nodes.
	SitesReached, SitesFired map[string]uint64
	// KnownActions are the things an operator or a client does that are
	// not faults but take code paths of their own (adding partitions,
	// deleting records, a static member coming back), which the
	// workload declares with DeclareActions; Actions counts them.
	KnownActions []string
	Actions      map[string]uint64
}

// NewCoverage returns empty counts over the known fault kinds and sites.
func NewCoverage(knownFaults, knownSites []string) *Coverage {
	return &Coverage{
		KnownFaults:  slices.Clone(knownFaults),
		KnownSites:   slices.Clone(knownSites),
		Faults:       map[string]uint64{},
		SitesReached: map[string]uint64{},
		SitesFired:   map[string]uint64{},
		Actions:      map[string]uint64{},
	}
}

// DeclareActions adds actions the workload can take to the known ones.
func (c *Coverage) DeclareActions(actions ...string) {
	c.KnownActions = appendNew(c.KnownActions, actions...)
}

// CountAction adds n actions of a kind, which must be declared, for the
// reason CountFault gives.
func (c *Coverage) CountAction(action string, n int) {
	countDeclared(c.Actions, c.KnownActions, "action", action, n)
}

// The disk's own faults, which simdisk draws at the chances a seed gives
// it rather than a schedule: writes torn by a crash, reads returning a
// flipped bit, fsyncs failing. They are named as the scenario's disk
// settings are.
const (
	FaultTornWrite      = "torn-write"
	FaultReadCorruption = "read-corruption"
	FaultSyncFailure    = "sync-failure"
)

// DiskFaults lists the disk's own faults, for a workload that draws their
// chances.
func DiskFaults() []string {
	return []string{FaultReadCorruption, FaultSyncFailure, FaultTornWrite}
}

// BuggifySitesIn lists core's BUGGIFY sites in the given core packages
// ("quorum", "log"): the sites a workload running those packages can
// reach. A site's name starts with its package's (core/buggify_sites.go).
func BuggifySitesIn(packages ...string) []string {
	var sites []string
	for _, site := range core.BuggifySites() {
		for _, p := range packages {
			if strings.HasPrefix(site, p+"-") {
				sites = append(sites, site)
				break
			}
		}
	}
	return sites
}

// CountFault adds n applied faults of a kind. The kind must be one c
// knows: a workload applying a fault it did not declare would hide it
// from every "never reached" line, so that is a bug in the workload.
func (c *Coverage) CountFault(kind string, n int) {
	countDeclared(c.Faults, c.KnownFaults, "fault", kind, n)
}

// countDeclared adds n to counts[name], panicking if name is not among
// known (what says what it names, for the message).
func countDeclared(counts map[string]uint64, known []string, what, name string, n int) {
	if n <= 0 {
		return
	}
	if !slices.Contains(known, name) {
		panic(fmt.Sprintf("sim: coverage counts %s %q, which its workload does not declare (%v)", what, name, known))
	}
	counts[name] += uint64(n)
}

// appendNew appends the items list does not hold yet, in order.
func appendNew(list []string, items ...string) []string {
	for _, item := range items {
		if !slices.Contains(list, item) {
			list = append(list, item)
		}
	}
	return list
}

// CountSites adds what one machine's BUGGIFY sites did. A site reached
// that c does not know joins the known ones, so a sweep still lists it;
// each workload's test checks that it declares every site it reaches.
func (c *Coverage) CountSites(b *core.Buggify) {
	for _, site := range b.Counts() {
		c.KnownSites = appendNew(c.KnownSites, site.Site)
		c.SitesReached[site.Site] += uint64(site.Reached)
		c.SitesFired[site.Site] += uint64(site.Fired)
	}
}

// CountDisk adds the disk's own faults one disk suffered (DiskFaults).
func (c *Coverage) CountDisk(stats simdisk.Stats) {
	c.CountFault(FaultTornWrite, int(stats.CrashesTorn))
	c.CountFault(FaultReadCorruption, int(stats.ReadsCorrupted))
	c.CountFault(FaultSyncFailure, int(stats.SyncsFailed))
}

// Add sums another run's coverage into c.
func (c *Coverage) Add(other *Coverage) {
	if other == nil {
		return
	}
	c.KnownFaults = appendNew(c.KnownFaults, other.KnownFaults...)
	c.KnownSites = appendNew(c.KnownSites, other.KnownSites...)
	c.DeclareActions(other.KnownActions...)
	for k, n := range other.Faults {
		c.Faults[k] += n
	}
	for s, n := range other.SitesReached {
		c.SitesReached[s] += n
	}
	for s, n := range other.SitesFired {
		c.SitesFired[s] += n
	}
	for a, n := range other.Actions {
		c.Actions[a] += n
	}
}

// NeverReached lists the known fault kinds never applied ("fault:pause"),
// the known actions never taken ("action:grow-partitions") and the known
// sites never reached ("buggify:quorum-...") or reached but never fired
// ("buggify-fired:..."), sorted.
func (c *Coverage) NeverReached() []string {
	var missed []string
	for _, k := range c.KnownFaults {
		if c.Faults[k] == 0 {
			missed = append(missed, "fault:"+k)
		}
	}
	for _, a := range c.KnownActions {
		if c.Actions[a] == 0 {
			missed = append(missed, "action:"+a)
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
	for _, a := range sortedKeys(c.Actions) {
		fmt.Fprintf(&b, " action_%s=%d", a, c.Actions[a])
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
