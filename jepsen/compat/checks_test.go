package compat

import (
	"fmt"
	"maps"
	"slices"
)

// problemsShownMax bounds the problems one check lists: the first few
// say what is wrong; a thousand more would bury them.
const problemsShownMax = 12

// problems collects what a check found wrong.
type problems struct {
	list  []string
	total int
}

func (p *problems) add(format string, args ...any) {
	p.total++
	if len(p.list) < problemsShownMax {
		p.list = append(p.list, fmt.Sprintf(format, args...))
	}
}

// keyHasher is a client's own choice of partition for a key: ok is false
// when the client places such a key anywhere (a null key, for most).
type keyHasher func(key []byte, partitions int32) (partition int32, ok bool)

// checkContent: every planned record was read back exactly once, byte for
// byte (key, value, headers, null apart from empty), and nothing else was.
func checkContent(plan []plannedRecord, consumed []consumedRecord) problems {
	var found problems
	want := map[string]int{}
	for _, r := range plan {
		want[r.String()]++
	}
	got := map[string]int{}
	for _, r := range consumed {
		got[r.String()]++
	}
	for _, r := range plan {
		identity := r.String()
		if got[identity] == 0 {
			found.add("missing: %s", identity)
		}
	}
	for _, r := range consumed {
		identity := r.String()
		switch {
		case want[identity] == 0:
			found.add("unexpected at partition %d offset %d: %s", r.Partition, r.Offset, identity)
		case got[identity] > want[identity]:
			found.add("duplicate at partition %d offset %d: %s", r.Partition, r.Offset, identity)
		}
	}
	return found
}

// checkOrder: within each partition, records were read in offset order,
// and that order is the order they were produced in. A record's partition
// is the one its producer reported, or where it was read when the
// producer does not say.
func checkOrder(plan []plannedRecord, produced []producedRecord, consumed []consumedRecord) problems {
	var found problems
	partitionOf := map[string]int32{}
	for _, r := range consumed {
		partitionOf[r.String()] = r.Partition
	}
	for _, r := range produced {
		if r.Partition >= 0 {
			identity := r.String()
			if read, ok := partitionOf[identity]; ok && read != r.Partition {
				found.add("produced to partition %d but read from partition %d: %s", r.Partition, read, identity)
			}
			partitionOf[identity] = r.Partition
		}
	}
	want := map[int32][]string{}
	for _, r := range plan {
		if partition, ok := partitionOf[r.String()]; ok {
			want[partition] = append(want[partition], r.String())
		}
	}
	got := map[int32][]string{}
	lastOffset := map[int32]int64{}
	for _, r := range consumed {
		if last, ok := lastOffset[r.Partition]; ok && r.Offset <= last {
			found.add("partition %d: offset %d read after offset %d", r.Partition, r.Offset, last)
		}
		lastOffset[r.Partition] = r.Offset
		got[r.Partition] = append(got[r.Partition], r.String())
	}
	for _, partition := range slices.Sorted(maps.Keys(want)) {
		wantOrder, gotOrder := want[partition], got[partition]
		for i := range max(len(wantOrder), len(gotOrder)) {
			switch {
			case i >= len(gotOrder):
				found.add("partition %d: position %d: want %s, read nothing", partition, i, wantOrder[i])
			case i >= len(wantOrder):
				found.add("partition %d: position %d: read %s, want nothing", partition, i, gotOrder[i])
			case wantOrder[i] != gotOrder[i]:
				found.add("partition %d: position %d: read %s, want %s", partition, i, gotOrder[i], wantOrder[i])
			}
		}
	}
	return found
}

// checkPartitioning: every key the client hashes has all its records in
// one partition, the one the client's own hash of the key names. Keys it
// places at random (null keys; empty ones too for librdkafka) are exempt.
func checkPartitioning(consumed []consumedRecord, hash keyHasher) problems {
	var found problems
	first := map[string]consumedRecord{}
	for _, r := range consumed {
		want, hashed := hash(r.Key, roundTripPartitions)
		if !hashed {
			continue
		}
		key := string(r.Key)
		if earlier, ok := first[key]; ok {
			if earlier.Partition != r.Partition {
				found.add("key %q in partition %d (offset %d) and partition %d (offset %d)",
					key, earlier.Partition, earlier.Offset, r.Partition, r.Offset)
			}
			continue
		}
		first[key] = r
		if want != r.Partition {
			found.add("key %q in partition %d, the client's hash says %d", key, r.Partition, want)
		}
	}
	return found
}

// checkOffsets: each partition's offsets are dense from 0, and where the
// producer reported an offset, the record was read there.
func checkOffsets(produced []producedRecord, consumed []consumedRecord) problems {
	var found problems
	offsets := map[int32][]int64{}
	readAt := map[string]consumedRecord{}
	for _, r := range consumed {
		offsets[r.Partition] = append(offsets[r.Partition], r.Offset)
		readAt[r.String()] = r
	}
	for _, partition := range slices.Sorted(maps.Keys(offsets)) {
		sorted := slices.Sorted(slices.Values(offsets[partition]))
		for i, offset := range sorted {
			if offset != int64(i) {
				found.add("partition %d: offset %d where %d was expected (offsets must be dense from 0)", partition, offset, i)
				break
			}
		}
	}
	for _, r := range produced {
		if r.Offset < 0 {
			continue
		}
		read, ok := readAt[r.String()]
		if ok && (read.Partition != r.Partition || read.Offset != r.Offset) {
			found.add("produced at %d/%d, read at %d/%d: %s", r.Partition, r.Offset, read.Partition, read.Offset, r.String())
		}
	}
	return found
}

// checkListOffsets: each partition's earliest offset is 0 and its latest
// is the number of records read from it.
func checkListOffsets(consumed []consumedRecord, earliest, latest map[int32]int64) problems {
	var found problems
	counts := map[int32]int64{}
	for _, r := range consumed {
		counts[r.Partition]++
	}
	for partition := range int32(roundTripPartitions) {
		if got, ok := earliest[partition]; !ok || got != 0 {
			found.add("partition %d: earliest offset %d (present %v), want 0", partition, got, ok)
		}
		if got, ok := latest[partition]; !ok || got != counts[partition] {
			found.add("partition %d: latest offset %d (present %v), want %d (records read)", partition, got, ok, counts[partition])
		}
	}
	return found
}
