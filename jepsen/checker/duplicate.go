package checker

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"sluice/jepsen/history"
)

// sighting is one observation together with its partition, for checks
// that look across partitions.
type sighting struct {
	partition history.TopicPartition
	observation
}

// duplicates finds values observed at two or more distinct positions
// (partition, offset). A value sent to one partition and polled from
// another counts too: it is in two places.
//
// Where loss is permitted, a duplicate can be what loss looks like: the
// log lost a record a consumer had already read (and the producer's
// idempotence state with it), the producer retried it, and it was written
// again further down the rebuilt log. Such a finding is permitted when
// every position but one was later overwritten: another value was seen at
// that offset, so the log there is not what it was. A value that sits at
// two positions of the log as it stands is a failure anywhere.
//
// Deletion (Options.Deleted) takes the idempotence state too: a position
// below a partition's deleted offset is gone on purpose, with the
// producer's state for it (Kafka drops a producer whose last batch is
// below the log start), so a retry written again after it is permitted,
// loss or not.
func (a *analysis) duplicates() []Finding {
	repeated := a.valuesAtSeveralPositions()
	var sightings []sighting
	for _, tp := range a.partitions {
		for _, seen := range a.logs[tp].observations {
			if repeated[seen.value] {
				sightings = append(sightings, sighting{partition: tp, observation: seen})
			}
		}
	}
	slices.SortFunc(sightings, func(x, y sighting) int {
		return cmp.Or(strings.Compare(x.value, y.value), x.partition.Compare(y.partition),
			cmp.Compare(x.offset, y.offset), cmp.Compare(x.op, y.op))
	})
	var findings []Finding
	for start := 0; start < len(sightings); {
		end := start + 1
		for end < len(sightings) && sightings[end].value == sightings[start].value {
			end++
		}
		if finding, ok := a.duplicateOf(sightings[start:end]); ok {
			findings = append(findings, finding)
		}
		start = end
	}
	return findings
}

// valuesAtSeveralPositions lists the values observed at two or more
// positions (partition, offset): the only ones duplicateOf can find
// anything in. Most values sit at one position, and sorting every
// sighting by value to find the few that do not cost more than this.
func (a *analysis) valuesAtSeveralPositions() map[string]bool {
	type position struct {
		partition history.TopicPartition
		offset    int64
	}
	first := map[string]position{}
	several := map[string]bool{}
	for _, tp := range a.partitions {
		for _, seen := range a.logs[tp].observations {
			at := position{tp, seen.offset}
			if earlier, observed := first[seen.value]; !observed {
				first[seen.value] = at
			} else if earlier != at {
				several[seen.value] = true
			}
		}
	}
	return several
}

// duplicateOf judges every sighting of one value, sorted by position.
func (a *analysis) duplicateOf(sightings []sighting) (Finding, bool) {
	type position struct {
		partition history.TopicPartition
		offset    int64
		ops       []int
	}
	var positions []position
	for _, seen := range sightings {
		last := len(positions) - 1
		if last >= 0 && positions[last].partition == seen.partition && positions[last].offset == seen.offset {
			positions[last].ops = append(positions[last].ops, seen.op)
			continue
		}
		positions = append(positions, position{partition: seen.partition, offset: seen.offset, ops: []int{seen.op}})
	}
	if len(positions) < 2 {
		return Finding{}, false
	}
	var firstOps, ops []int
	var places []string
	status, standing := Permitted, 0
	for _, at := range positions {
		switch {
		case at.partition != positions[0].partition:
			status = Failure // in two partitions: no loss or deletion explains that
		case a.deleted(at.partition, at.offset):
			// Gone on purpose, with the producer's state for it.
		case a.overwritten(at.partition, at.offset, sightings[0].value):
			if !a.lossPermitted[at.partition] && !a.lossyPartitions[at.partition] {
				status = Failure // replaced where no loss is permitted
			}
		default:
			standing++
		}
		firstOps = append(firstOps, at.ops[0])
		ops = append(ops, at.ops...)
		places = append(places, fmt.Sprintf("%s@%d (%s)", at.partition, at.offset, describeOps(at.ops)))
	}
	lossy := a.lossPermitted[positions[0].partition] || a.lossyPartitions[positions[0].partition]
	if standing > 1 || (!lossy && !a.deletedBeforeTheRetry(sightings)) {
		status = Failure
	}
	return Finding{
		Anomaly:   Duplicate,
		Status:    status,
		Partition: positions[0].partition,
		Ops:       opListPreferring(firstOps, ops),
		Detail: fmt.Sprintf("value %q observed at %d positions: %s",
			sightings[0].value, len(positions), strings.Join(places, ", ")),
	}, true
}

// deletedBeforeTheRetry reports whether the sightings of one value (sorted
// by position) allow a deletion to explain its copies: a retry is written
// again only once its first copy is gone, with the producer's state, so
// no one answer may show two copies at once (no loss explains that
// either: a replica's log never held both), and the producer takes its
// last attempt's answer, so a deleted copy below another may not be the
// acknowledged one. (Whether the copies are deleted or overwritten at
// all is duplicateOf's to judge.) Where loss is permitted it is not
// asked: a leader elected without the producer's state, or an acks=1
// write lost and rewritten, leaves copies these rules cannot order
// (cluster seed 60, an unclean election, has one acknowledged below its
// rewrite).
func (a *analysis) deletedBeforeTheRetry(sightings []sighting) bool {
	highest := sightings[len(sightings)-1]
	for i, seen := range sightings {
		if !seen.polled && seen.offset < highest.offset && seen.partition == highest.partition && a.deleted(seen.partition, seen.offset) {
			return false // acknowledged at a deleted lower copy
		}
		for _, other := range sightings[:i] {
			if other.op == seen.op && (other.partition != seen.partition || other.offset != seen.offset) {
				return false // one answer held two copies
			}
		}
	}
	return true
}

// describeOps is "op 3" or "ops 3, 7, 9", listing at most
// opsPerFindingMax.
func describeOps(ops []int) string {
	ops = opList(ops...)
	if len(ops) == 1 {
		return fmt.Sprintf("op %d", ops[0])
	}
	words := make([]string, len(ops))
	for i, op := range ops {
		words[i] = fmt.Sprint(op)
	}
	return "ops " + strings.Join(words, ", ")
}

// overwritten reports whether some value other than value was seen at
// offset in tp: the record there was replaced.
func (a *analysis) overwritten(tp history.TopicPartition, offset int64, value string) bool {
	observations := a.logs[tp].observations
	at, _ := slices.BinarySearchFunc(observations, offset, func(o observation, offset int64) int { return cmp.Compare(o.offset, offset) })
	for ; at < len(observations) && observations[at].offset == offset; at++ {
		if observations[at].value != value {
			return true
		}
	}
	return false
}
