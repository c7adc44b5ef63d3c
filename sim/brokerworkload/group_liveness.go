package brokerworkload

import (
	"fmt"
	"time"

	"sluice/jepsen/history"
	"sluice/sim/simclient"
)

// The group's part of the liveness phase: once the final drain has found
// every partition's end, the group must settle and commit every end, as
// simclient.GroupDrain judges it.

const (
	// groupLivenessMax bounds it, from the end of the final drain. A
	// consumer that crashed is expired after its session timeout (at
	// most sessionTimeoutDrawMax), a rebalance waits at most a rebalance
	// timeout (rebalanceTimeoutDrawMax) for members to rejoin and sync,
	// and reading to the end takes polls of at most a few hundred
	// milliseconds: a few rebalances' worth of slack on top.
	groupLivenessMax = 30 * time.Second
	// groupCheckInterval is how often the workload looks at the group
	// while it settles.
	groupCheckInterval = 50 * time.Millisecond
)

// convergeGroup waits for the group to settle and drain to targets
// (simclient.GroupDrain).
func (r *run) convergeGroup(targets map[history.TopicPartition]int64) *violation {
	deadline := r.kernel.Now() + int64(groupLivenessMax)
	drain := simclient.NewGroupDrain(targets)
	var look func()
	look = func() {
		if drain.Confirmed() {
			return
		}
		drain.Look(r.groupMembers())
		r.kernel.Schedule(int64(groupCheckInterval), nil, "workload.group-drain", look)
	}
	look()
	if !r.kernel.RunWhile(deadline, func() bool { return !drain.Confirmed() }) {
		return &violation{"group-liveness", fmt.Sprintf("the group did not settle and commit every partition's end within %v of the final drain: %s", groupLivenessMax, drain.Problem())}
	}
	r.note("group drained")
	return nil
}
