package clusterworkload

import (
	"fmt"
	"slices"
	"time"

	"sluice/jepsen/history"
	"sluice/sim/simclient"
)

// A group's part of the liveness phase: once the final drain has found
// every partition's end, the group must settle and commit every end of its
// topic, as simclient.GroupDrain judges it.

// groupCheckInterval is how often the workload looks at a settling group.
const groupCheckInterval = 50 * time.Millisecond

// convergeGroup waits, until deadline, for a group to settle and commit
// every partition's end (simclient.GroupDrain).
func (r *run) convergeGroup(g *groupDriver, ends map[history.TopicPartition]int64, deadline int64) bool {
	groupEnds := map[history.TopicPartition]int64{}
	for tp, end := range ends { // order-independent: builds a map
		if tp.Topic == g.settings.Topic {
			groupEnds[tp] = end
		}
	}
	drain := simclient.NewGroupDrain(groupEnds)
	var look func()
	look = func() {
		if drain.Confirmed() {
			return
		}
		drain.Look(g.groupMembers())
		r.kernel.Schedule(int64(groupCheckInterval), nil, "workload.group-drain", look)
	}
	look()
	if !r.runWhile(deadline, func() bool { return !drain.Confirmed() }) {
		if r.violation == nil {
			r.fail("group-liveness", fmt.Sprintf("group %s did not settle and commit every partition's end within %v of the heal: %s",
				g.settings.Name, r.scenario.Liveness, drain.Problem()))
		}
		return false
	}
	r.note("group " + g.settings.Name + " drained")
	return true
}

// groupMembers lists a group's members for the drain.
func (g *groupDriver) groupMembers() []simclient.GroupMember {
	members := make([]simclient.GroupMember, 0, len(g.members))
	for _, m := range g.members {
		members = append(members, simclient.GroupMember{Name: m.name, Consumer: m.consumer})
	}
	return members
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
