package canarysuite

import (
	"strings"
	"testing"
)

// TestEveryCanaryIsCaughtWithinItsBound measures every planted bug from
// every default starting point and fails if any escapes its SeedsMax, or
// if the suite has fewer than canariesDistinctMin distinct planted bugs.
// The table is logged, so `go test -v` shows the simulator's power.
func TestEveryCanaryIsCaughtWithinItsBound(t *testing.T) {
	measurements := Measure(Options{})
	distinct := map[string]bool{}
	for _, m := range measurements {
		distinct[m.Canary.Name] = true
	}
	if len(distinct) < canariesDistinctMin {
		t.Errorf("%d distinct planted bugs, want at least %d", len(distinct), canariesDistinctMin)
	}
	var table strings.Builder
	if err := Table(&table, measurements, len(DefaultStarts())); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", table.String())
	for _, m := range measurements {
		if len(m.Counts) != len(DefaultStarts()) {
			t.Fatalf("%s: %d counts, want one per starting point", m.Canary.Name, len(m.Counts))
		}
		for _, c := range m.Counts {
			if !c.Caught {
				t.Errorf("%s (%s workload) escaped seeds %d-%d", m.Canary.Name, m.Canary.Workload, c.Start, c.Start+uint64(m.Canary.SeedsMax)-1)
				continue
			}
			if c.Check == "" || c.Seeds < 1 || c.Seeds > m.Canary.SeedsMax || c.Seed != c.Start+uint64(c.Seeds)-1 || c.Elapsed <= 0 {
				t.Errorf("%s: inconsistent count %+v", m.Canary.Name, c)
			}
		}
	}
}

// canariesDistinctMin is issue 7's floor on planted bugs.
const canariesDistinctMin = 12
