package compat

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// checkAtLeastOnce: every produced record was read, and a record read
// twice was first read by a member whose commit of it failed — the only
// duplicate at-least-once delivery allows. Reads are in the order the
// members finished with them; a member finishes (commits) before it lets
// a rebalance hand its partitions on, so a later read is a later delivery.
func checkAtLeastOnce(produced map[partitionOffset]string, reads []groupRead) problems {
	var found problems
	byPlace := map[partitionOffset][]groupRead{}
	for _, r := range reads {
		byPlace[r.at] = append(byPlace[r.at], r)
	}
	for _, at := range sortedPlaces(produced) {
		deliveries := byPlace[at]
		if len(deliveries) == 0 {
			found.add("%v (%q) was never read", at, produced[at])
			continue
		}
		for _, earlier := range deliveries[:len(deliveries)-1] {
			if earlier.committed {
				found.add("%v was read again after %s committed it (%d deliveries: %s)", at, earlier.member, len(deliveries), describeDeliveries(deliveries))
				break
			}
		}
	}
	checkReadValues(&found, produced, reads)
	return found
}

// checkExactlyOnce: every produced record was read exactly once. For
// groups that never rebalance while records flow, where at-least-once
// has no reason to deliver anything twice.
func checkExactlyOnce(produced map[partitionOffset]string, reads []groupRead) problems {
	var found problems
	byPlace := map[partitionOffset][]groupRead{}
	for _, r := range reads {
		byPlace[r.at] = append(byPlace[r.at], r)
	}
	for _, at := range sortedPlaces(produced) {
		switch deliveries := byPlace[at]; {
		case len(deliveries) == 0:
			found.add("%v (%q) was never read", at, produced[at])
		case len(deliveries) > 1:
			found.add("%v was read %d times: %s", at, len(deliveries), describeDeliveries(deliveries))
		}
	}
	checkReadValues(&found, produced, reads)
	return found
}

// checkOneReaderPerPartition: each partition was read by one member only,
// as a group that never rebalanced while records flowed must deliver.
func checkOneReaderPerPartition(reads []groupRead) problems {
	var found problems
	readers := map[int32][]string{}
	for _, r := range reads {
		if !slices.Contains(readers[r.at.Partition], r.member) {
			readers[r.at.Partition] = append(readers[r.at.Partition], r.member)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(readers)) {
		if len(readers[p]) > 1 {
			found.add("partition %d was read by %v", p, readers[p])
		}
	}
	return found
}

// checkReadValues adds a problem for each read of a place where nothing,
// or something else, was produced.
func checkReadValues(found *problems, produced map[partitionOffset]string, reads []groupRead) {
	for _, r := range reads {
		if want, ok := produced[r.at]; !ok {
			found.add("%s read %q at %v, where nothing was produced", r.member, r.value, r.at)
		} else if r.value != want {
			found.add("%s read %q at %v, where %q was produced", r.member, r.value, r.at, want)
		}
	}
}

func sortedPlaces[V any](m map[partitionOffset]V) []partitionOffset {
	return slices.SortedFunc(maps.Keys(m), func(a, b partitionOffset) int {
		if a.Partition != b.Partition {
			return int(a.Partition - b.Partition)
		}
		return int(a.Offset - b.Offset)
	})
}

func describeDeliveries(deliveries []groupRead) string {
	parts := make([]string, len(deliveries))
	for i, d := range deliveries {
		parts[i] = fmt.Sprintf("%s(committed %v)", d.member, d.committed)
	}
	return strings.Join(parts, ", ")
}
