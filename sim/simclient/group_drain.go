package simclient

import (
	"fmt"
	"slices"

	"sluice/jepsen/history"
)

// A group's part of a workload's liveness phase: once the final drain has
// found every partition's end, the group must settle (every member stable
// in one generation, every partition assigned to exactly one of them) and
// drain through the group: each partition's committed offset at its end,
// as the owner's acknowledged commits say and as reading them back from
// the coordinator confirms. The workloads schedule the looks and judge the
// deadline; GroupDrain keeps the state between looks.

// GroupMember is one member of a group, named for a failure's detail.
type GroupMember struct {
	Name     string
	Consumer *GroupConsumer
}

// GroupSettled reports whether a group has settled, as its members see it:
// every member stable in one generation, whose assignments cover every one
// of partitions exactly once. It returns each partition's owner, or what
// is still missing.
func GroupSettled(members []GroupMember, partitions []history.TopicPartition) (int32, map[history.TopicPartition]GroupMember, string) {
	owners := map[history.TopicPartition]GroupMember{}
	generation := int32(-1)
	for _, m := range members {
		membership := m.Consumer.Membership()
		switch {
		case !membership.Stable:
			return -1, nil, fmt.Sprintf("%s not stable (generation %d, member %q)", m.Name, membership.Generation, membership.MemberID)
		case generation >= 0 && membership.Generation != generation:
			return -1, nil, fmt.Sprintf("%s in generation %d, others in %d", m.Name, membership.Generation, generation)
		}
		generation = membership.Generation
		for _, tp := range membership.Assigned {
			if other, owned := owners[tp]; owned {
				return -1, nil, fmt.Sprintf("%s assigned to %s and %s in generation %d", tp, other.Name, m.Name, generation)
			}
			owners[tp] = m
		}
	}
	for _, tp := range partitions {
		if _, owned := owners[tp]; !owned {
			return -1, nil, fmt.Sprintf("%s assigned to nobody in generation %d", tp, generation)
		}
	}
	return generation, owners, ""
}

// GroupDrain is one group's convergence under way.
type GroupDrain struct {
	// ends are the group's partitions' ends, from the final drain, and
	// partitions lists them in order.
	ends       map[history.TopicPartition]int64
	partitions []history.TopicPartition
	// round counts attempts at reading the committed offsets back; a
	// read answered for an older round is ignored.
	round int
	// reading counts this round's read-backs still unanswered, asked
	// in readGeneration.
	reading        int
	readGeneration int32
	readMismatch   bool
	confirmed      bool
	// problem says what the group still lacks, for a failure's detail.
	problem string
}

// NewGroupDrain starts a drain of the group to ends.
func NewGroupDrain(ends map[history.TopicPartition]int64) *GroupDrain {
	partitions := make([]history.TopicPartition, 0, len(ends))
	for tp := range ends {
		partitions = append(partitions, tp)
	}
	slices.SortFunc(partitions, history.TopicPartition.Compare)
	return &GroupDrain{ends: ends, partitions: partitions, problem: "not looked at yet"}
}

// Confirmed reports whether the group has drained: settled, every owner's
// commits at the ends, and the coordinator agreeing.
func (d *GroupDrain) Confirmed() bool { return d.confirmed }

// Problem says what the group still lacks.
func (d *GroupDrain) Problem() string { return d.problem }

// Look moves the drain on: once the group has settled with every owner's
// commits at the ends, it reads the committed offsets back from the
// coordinator; once every read agrees, the drain is confirmed.
func (d *GroupDrain) Look(members []GroupMember) {
	if d.confirmed {
		return
	}
	generation, owners, problem := GroupSettled(members, d.partitions)
	if d.reading > 0 {
		if problem == "" && generation == d.readGeneration {
			return // the reads are on their way
		}
		// The group moved while reading: those reads are forgotten by
		// their consumers, and no longer count.
		d.round++
		d.reading = 0
	}
	if problem != "" {
		d.problem = problem
		return
	}
	for _, tp := range d.partitions {
		if committed, end := owners[tp].Consumer.Committed(tp), d.ends[tp]; committed != end {
			d.problem = fmt.Sprintf("%s committed at %d by %s, its end is %d", tp, committed, owners[tp].Name, end)
			return
		}
	}
	d.round++
	round := d.round
	d.readGeneration, d.readMismatch = generation, false
	for _, m := range members {
		if len(m.Consumer.Membership().Assigned) == 0 {
			continue
		}
		d.reading++
		m.Consumer.ReadCommitted(func(read []history.Commit) {
			if round != d.round {
				return
			}
			d.reading--
			for _, commit := range read {
				if end := d.ends[commit.Partition]; commit.Offset != end {
					d.readMismatch = true
					d.problem = fmt.Sprintf("the coordinator has %s committed at %d, its end is %d", commit.Partition, commit.Offset, end)
				}
			}
			if d.reading == 0 && !d.readMismatch {
				d.confirmed = true
			}
		})
	}
}
