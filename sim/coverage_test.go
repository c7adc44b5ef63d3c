package sim

import (
	"slices"
	"strings"
	"testing"

	"sluice/core"
	"sluice/sim/kernel"
)

func TestBuggifySitesInListsOnlyThosePackages(t *testing.T) {
	quorum := BuggifySitesIn("quorum")
	if len(quorum) == 0 {
		t.Fatal("no site in core/quorum")
	}
	for _, site := range quorum {
		if !strings.HasPrefix(site, "quorum-") {
			t.Fatalf("site %s is not core/quorum's", site)
		}
	}
	if got := BuggifySitesIn(); len(got) != 0 {
		t.Fatalf("no package, sites %v", got)
	}
	every := BuggifySitesIn("log", "quorum", "replica")
	for _, site := range every {
		if !slices.Contains(core.BuggifySites(), site) {
			t.Fatalf("site %s is not one of core's", site)
		}
	}
}

func TestCoverageCountsOnlyDeclaredFaults(t *testing.T) {
	c := NewCoverage([]string{"crash", "pause"}, nil)
	c.CountFault("crash", 2)
	c.CountFault("pause", 0)
	c.CountFault("isolate", 0) // nothing applied: nothing to declare
	if !slices.Equal(c.NeverReached(), []string{"fault:pause"}) {
		t.Fatalf("never reached %v, want fault:pause only", c.NeverReached())
	}
	defer func() {
		if recovered := recover(); recovered == nil || !strings.Contains(recovered.(string), `"isolate"`) {
			t.Fatalf("counting an undeclared fault: recovered %v, want a panic naming it", recovered)
		}
	}()
	c.CountFault("isolate", 1)
}

func TestCoverageKnowsEverySiteReached(t *testing.T) {
	b := core.NewBuggify(kernel.NewRand(1, "coverage-test"), 1, 1)
	b.Hit(core.BuggifyLogReadSmallChunks)
	b.Hit(core.BuggifyLogReadSmallChunks)
	c := NewCoverage(nil, []string{core.BuggifyQuorumSuccessorNoDelay})
	c.CountSites(b)
	c.CountSites(nil) // a machine with BUGGIFY off
	if c.SitesReached[core.BuggifyLogReadSmallChunks] != 2 || !slices.Contains(c.KnownSites, core.BuggifyLogReadSmallChunks) {
		t.Fatalf("reached %v known %v", c.SitesReached, c.KnownSites)
	}
	if !slices.Equal(c.NeverReached(), []string{"buggify:" + core.BuggifyQuorumSuccessorNoDelay}) {
		t.Fatalf("never reached %v", c.NeverReached())
	}
}

func TestCoverageCountsDeclaredActionsAndNamesTheOnesNeverTaken(t *testing.T) {
	c := NewCoverage([]string{"crash"}, nil)
	c.DeclareActions("grow-partitions", "delete-records")
	c.CountFault("crash", 1)
	c.CountAction("delete-records", 3)
	c.CountAction("static-rejoin", 0) // nothing taken: nothing to declare
	other := NewCoverage(nil, nil)
	other.DeclareActions("static-rejoin")
	other.CountAction("static-rejoin", 2)
	c.Add(other)
	if want := []string{"action:grow-partitions"}; !slices.Equal(c.NeverReached(), want) {
		t.Fatalf("never reached %v, want %v", c.NeverReached(), want)
	}
	if c.Actions["delete-records"] != 3 || c.Actions["static-rejoin"] != 2 {
		t.Fatalf("actions %v", c.Actions)
	}
	if line := c.Line(); !strings.Contains(line, " action_delete-records=3 action_static-rejoin=2\n") {
		t.Fatalf("line %q does not list the actions taken", line)
	}
	defer func() {
		if recovered := recover(); recovered == nil || !strings.Contains(recovered.(string), `"grow"`) {
			t.Fatalf("counting an undeclared action: recovered %v, want a panic naming it", recovered)
		}
	}()
	c.CountAction("grow", 1)
}
