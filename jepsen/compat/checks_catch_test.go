package compat

import (
	"slices"
	"testing"
)

// TestChecksCatchBrokenRoundTrips runs the round-trip checks on a perfect
// read-back, which must pass every one, then on read-backs broken in one
// way each, which must fail the check meant to catch it. Without this, a
// check that never fails would look exactly like a broker that never errs.
func TestChecksCatchBrokenRoundTrips(t *testing.T) {
	client := &franzGoClient{}
	plan := roundTripPlan(codecsAll)
	perfectProduced, perfectConsumed := perfectRoundTrip(plan, client.hash)

	type verdicts struct{ content, order, partitioning, offsets, listOffsets int }
	judge := func(produced []producedRecord, consumed []consumedRecord) verdicts {
		earliest, latest := map[int32]int64{}, map[int32]int64{}
		for _, r := range perfectConsumed {
			earliest[r.Partition] = 0
			latest[r.Partition] = max(latest[r.Partition], r.Offset+1)
		}
		return verdicts{
			content:      checkContent(plan, consumed).total,
			order:        checkOrder(plan, produced, consumed).total,
			partitioning: checkPartitioning(consumed, client.hash).total,
			offsets:      checkOffsets(produced, consumed).total,
			listOffsets:  checkListOffsets(consumed, earliest, latest).total,
		}
	}
	if got := judge(perfectProduced, perfectConsumed); got != (verdicts{}) {
		t.Fatalf("a perfect round trip fails checks: %+v", got)
	}

	// index finds the first consumed record whose value is value.
	index := func(consumed []consumedRecord, value string) int {
		i := slices.IndexFunc(consumed, func(r consumedRecord) bool { return string(r.Value) == value })
		if i < 0 {
			t.Fatalf("no consumed record with value %q", value)
		}
		return i
	}
	cases := []struct {
		name   string
		damage func(consumed []consumedRecord) []consumedRecord
		want   func(v verdicts) bool
	}{
		{"lost record", func(c []consumedRecord) []consumedRecord {
			return slices.Delete(c, 0, 1)
		}, func(v verdicts) bool { return v.content > 0 && v.listOffsets > 0 }},
		{"duplicated record", func(c []consumedRecord) []consumedRecord {
			return append(c, c[3])
		}, func(v verdicts) bool { return v.content > 0 && v.offsets > 0 }},
		{"empty value read as null", func(c []consumedRecord) []consumedRecord {
			c[index(c, "")].Value = nil
			return c
		}, func(v verdicts) bool { return v.content > 0 }},
		{"header value changed", func(c []consumedRecord) []consumedRecord {
			c[5].Headers = []header{{Key: "codec", Value: []byte("other")}, {Key: "empty", Value: []byte{}}}
			return c
		}, func(v verdicts) bool { return v.content > 0 }},
		{"two records of a partition swapped", func(c []consumedRecord) []consumedRecord {
			i, j := index(c, "value-none-round0-key0"), index(c, "value-none-round1-key0")
			c[i].record, c[j].record = c[j].record, c[i].record
			return c
		}, func(v verdicts) bool { return v.order > 0 }},
		{"key moved to another partition", func(c []consumedRecord) []consumedRecord {
			i := index(c, "value-gzip-round1-key3")
			c[i].Partition = (c[i].Partition + 1) % roundTripPartitions
			return c
		}, func(v verdicts) bool { return v.partitioning > 0 && v.order > 0 }},
		{"offset gap", func(c []consumedRecord) []consumedRecord {
			c[len(c)-1].Offset += 10
			return c
		}, func(v verdicts) bool { return v.offsets > 0 }},
	}
	for _, tc := range cases {
		broken := tc.damage(slices.Clone(perfectConsumed))
		if got := judge(perfectProduced, broken); !tc.want(got) {
			t.Errorf("%s: checks answered %+v, which misses it", tc.name, got)
		}
	}
}

// perfectRoundTrip is what a flawless broker and client would report for
// plan: keyed records where hash puts them, others spread in turn, dense
// offsets from 0 in produce order.
func perfectRoundTrip(plan []plannedRecord, hash keyHasher) ([]producedRecord, []consumedRecord) {
	next := map[int32]int64{}
	var produced []producedRecord
	var consumed []consumedRecord
	for i, r := range plan {
		partition, ok := hash(r.Key, roundTripPartitions)
		if !ok {
			partition = int32(i % roundTripPartitions)
		}
		offset := next[partition]
		next[partition]++
		produced = append(produced, producedRecord{record: r.record, Partition: partition, Offset: offset})
		consumed = append(consumed, consumedRecord{record: r.record, Partition: partition, Offset: offset})
	}
	return produced, consumed
}
