package clusterworkload

import (
	"fmt"
	"slices"
	"time"

	"sluice/jepsen/history"
)

// A group's part of the liveness phase: once the final drain has found
// every partition's end, the group must settle (every member stable in one
// generation, every partition of its topic assigned to exactly one) and
// drain through the group: each partition's committed offset at its end,
// as the owner's acknowledged commits say and as reading them back from
// the coordinator confirms.

// groupCheckInterval is how often the workload looks at a settling group.
const groupCheckInterval = 50 * time.Millisecond

// groupDrain is one group's convergence under way.
type groupDrain struct {
	group *groupDriver
	// ends are the group's partitions' ends, from the final drain.
	ends map[history.TopicPartition]int64
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

// convergeGroup waits, until deadline, for a group to settle and commit
// every partition's end.
func (r *run) convergeGroup(g *groupDriver, ends map[history.TopicPartition]int64, deadline int64) bool {
	drain := &groupDrain{group: g, ends: map[history.TopicPartition]int64{}, problem: "not looked at yet"}
	for tp, end := range ends { // order-independent: builds a map
		if tp.Topic == g.settings.Topic {
			drain.ends[tp] = end
		}
	}
	var look func()
	look = func() {
		if drain.confirmed {
			return
		}
		r.lookAtGroup(drain)
		r.kernel.Schedule(int64(groupCheckInterval), nil, "workload.group-drain", look)
	}
	look()
	if !r.runWhile(deadline, func() bool { return !drain.confirmed }) {
		if r.violation == nil {
			r.fail("group-liveness", fmt.Sprintf("group %s did not settle and commit every partition's end within %v of the heal: %s",
				g.settings.Name, r.scenario.Liveness, drain.problem))
		}
		return false
	}
	r.note("group " + g.settings.Name + " drained")
	return true
}

// groupSettled reports whether a group has settled, as its members see it:
// every member up and stable in one generation, whose assignments cover
// every partition of the topic exactly once. It returns each partition's
// owner, or what is still missing.
func (r *run) groupSettled(g *groupDriver, partitions []history.TopicPartition) (int32, map[history.TopicPartition]*memberDriver, string) {
	owners := map[history.TopicPartition]*memberDriver{}
	generation := int32(-1)
	for _, m := range g.members {
		membership := m.consumer.Membership()
		switch {
		case !membership.Stable:
			return -1, nil, fmt.Sprintf("%s not stable (generation %d, member %q)", m.name, membership.Generation, membership.MemberID)
		case generation >= 0 && membership.Generation != generation:
			return -1, nil, fmt.Sprintf("%s in generation %d, others in %d", m.name, membership.Generation, generation)
		}
		generation = membership.Generation
		for _, tp := range membership.Assigned {
			if other := owners[tp]; other != nil {
				return -1, nil, fmt.Sprintf("%s assigned to %s and %s in generation %d", tp, other.name, m.name, generation)
			}
			owners[tp] = m
		}
	}
	for _, tp := range partitions {
		if owners[tp] == nil {
			return -1, nil, fmt.Sprintf("%s assigned to nobody in generation %d", tp, generation)
		}
	}
	return generation, owners, ""
}

// lookAtGroup moves a group's drain on: once the group has settled with
// every owner's commits at the ends, it reads the committed offsets back
// from the coordinator; once every read agrees, the drain is done.
func (r *run) lookAtGroup(drain *groupDrain) {
	partitions := sortedPartitions(drain.ends)
	generation, owners, problem := r.groupSettled(drain.group, partitions)
	if drain.reading > 0 {
		if problem == "" && generation == drain.readGeneration {
			return // the reads are on their way
		}
		// The group moved while reading: those reads no longer count.
		drain.round++
		drain.reading = 0
	}
	if problem != "" {
		drain.problem = problem
		return
	}
	for _, tp := range partitions {
		if committed, end := owners[tp].consumer.Committed(tp), drain.ends[tp]; committed != end {
			drain.problem = fmt.Sprintf("%s committed at %d by %s, its end is %d", tp, committed, owners[tp].name, end)
			return
		}
	}
	drain.round++
	round := drain.round
	drain.readGeneration, drain.readMismatch = generation, false
	for _, m := range drain.group.members {
		if len(m.consumer.Membership().Assigned) == 0 {
			continue
		}
		drain.reading++
		m.consumer.ReadCommitted(func(read []history.Commit) {
			if round != drain.round {
				return
			}
			drain.reading--
			for _, commit := range read {
				if end := drain.ends[commit.Partition]; commit.Offset != end {
					drain.readMismatch = true
					drain.problem = fmt.Sprintf("the coordinator has %s committed at %d, its end is %d", commit.Partition, commit.Offset, end)
				}
			}
			if drain.reading == 0 && !drain.readMismatch {
				drain.confirmed = true
			}
		})
	}
}

// sortedPartitions lists a map's partitions in order.
func sortedPartitions[V any](m map[history.TopicPartition]V) []history.TopicPartition {
	tps := make([]history.TopicPartition, 0, len(m))
	for tp := range m {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, history.TopicPartition.Compare)
	return tps
}
