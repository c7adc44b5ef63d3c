package compat

import (
	"slices"
	"testing"
)

// TestGroupChecksCatchBrokenGroups runs the group checks on a perfect
// history, which must pass them all, then on histories broken in one way
// each, which must fail the check meant to catch it: a check that never
// fails would look exactly like a broker that never errs.
func TestGroupChecksCatchBrokenGroups(t *testing.T) {
	const topic = "checks"
	produced := map[partitionOffset]string{}
	var perfect []groupRead
	for partition := range int32(3) {
		member := []string{"A", "B", "B"}[partition]
		for offset := range int64(4) {
			at := partitionOffset{partition, offset}
			produced[at] = groupValue(topic, at)
			perfect = append(perfect, groupRead{member: member, at: at, value: produced[at], committed: true})
		}
	}
	type verdicts struct{ atLeastOnce, exactlyOnce, oneReader int }
	judge := func(reads []groupRead) verdicts {
		return verdicts{
			atLeastOnce: checkAtLeastOnce(produced, reads).total,
			exactlyOnce: checkExactlyOnce(produced, reads).total,
			oneReader:   checkOneReaderPerPartition(reads).total,
		}
	}
	if got := judge(perfect); got != (verdicts{}) {
		t.Fatalf("a perfect history fails checks: %+v", got)
	}

	cases := []struct {
		name   string
		damage func(reads []groupRead) []groupRead
		want   func(v verdicts) bool
	}{
		{"record never read", func(r []groupRead) []groupRead {
			return slices.Delete(r, 5, 6)
		}, func(v verdicts) bool { return v.atLeastOnce > 0 && v.exactlyOnce > 0 }},
		{"committed record read again", func(r []groupRead) []groupRead {
			again := r[5]
			again.member = "C"
			return append(r, again)
		}, func(v verdicts) bool { return v.atLeastOnce > 0 && v.exactlyOnce > 0 && v.oneReader > 0 }},
		{"uncommitted record read again", func(r []groupRead) []groupRead {
			r[5].committed = false
			again := r[5]
			again.member = "C"
			again.committed = true
			return append(r, again)
		}, func(v verdicts) bool { return v.atLeastOnce == 0 && v.exactlyOnce > 0 && v.oneReader > 0 }},
		{"value changed", func(r []groupRead) []groupRead {
			r[2].value = "other"
			return r
		}, func(v verdicts) bool { return v.atLeastOnce > 0 && v.exactlyOnce > 0 }},
		{"read where nothing was produced", func(r []groupRead) []groupRead {
			at := partitionOffset{1, 9}
			return append(r, groupRead{member: "B", at: at, value: groupValue(topic, at), committed: true})
		}, func(v verdicts) bool { return v.atLeastOnce > 0 && v.exactlyOnce > 0 }},
	}
	for _, c := range cases {
		reads := c.damage(slices.Clone(perfect))
		if got := judge(reads); !c.want(got) {
			t.Errorf("%s: verdicts %+v", c.name, got)
		}
	}

	t.Run("ledger notices two owners and foreign reads", func(t *testing.T) {
		ledger := newGroupLedger()
		ledger.addProduced(produced)
		ledger.assigned("A", []int32{0, 1})
		ledger.revoked("A", []int32{1})
		ledger.assigned("B", []int32{1, 2}) // a proper hand-over of 1
		ledger.read("A", true, perfect[0])  // partition 0 is A's
		if found := ledger.violations(); found.total != 0 {
			t.Fatalf("a proper hand-over is reported: %v", found.list)
		}
		ledger.assigned("C", []int32{0})   // A still holds 0
		ledger.revoked("C", []int32{2})    // 2 is B's
		ledger.read("A", true, perfect[4]) // partition 1 is B's
		if found := ledger.violations(); found.total != 3 {
			t.Errorf("want 3 violations (two owners, a foreign revoke, a foreign read), got %d: %v", found.total, found.list)
		}
	})
	t.Run("prefix check notices repeats and gaps", func(t *testing.T) {
		first := []partitionOffset{{0, 0}, {0, 1}, {1, 0}}
		if found := checkPrefixes(produced, nil, first); found.total != 0 {
			t.Fatalf("a proper first run is reported: %v", found.list)
		}
		if found := checkPrefixes(produced, first, []partitionOffset{{0, 2}, {1, 1}, {2, 0}}); found.total != 0 {
			t.Fatalf("a proper second run is reported: %v", found.list)
		}
		if found := checkPrefixes(produced, first, []partitionOffset{{0, 1}, {0, 2}}); found.total == 0 {
			t.Errorf("a repeated record is not reported")
		}
		if found := checkPrefixes(produced, first, []partitionOffset{{0, 3}}); found.total == 0 {
			t.Errorf("a skipped record is not reported")
		}
	})
}
