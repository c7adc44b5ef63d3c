package harness

import (
	"context"
	"fmt"
	"sync/atomic"
)

// churner is an operator scaling the consumer group out and back in, as
// an autoscaler or a deploy does: every Workload.ChurnEvery one more
// member joins (a rebalance hands it some partitions) and, ChurnEvery
// later, leaves (kgo's Close: it commits nothing more, revokes, and sends
// LeaveGroup, so the group rebalances again at once). Under the eager
// protocol every such rebalance stops the whole group; under the
// cooperative one (Workload.Balancer) only the partitions that move stop,
// each revoked by its owner in one rebalance and assigned in the next,
// which is the path KIP-429 added to the coordinator. Static members
// (Workload.Static) do not leave when closed: the next round's member
// takes the last one's place under the same group.instance.id, or the
// coordinator expires it after its session. The members it starts record
// their ops like the others, so every checker holds them to the same
// promises.
type churner struct {
	cluster *Cluster
	log     *historyLog
	w       Workload
	failed  func(error)
	background

	joined, left atomic.Int64
}

func newChurner(cluster *Cluster, log *historyLog, w Workload, failed func(error)) *churner {
	return &churner{cluster: cluster, log: log, w: w, failed: failed}
}

func (c *churner) start(ctx context.Context) { c.background.start(ctx, c.run) }

// run alternates: wait, add a member; wait, let it leave. A member that
// cannot be made (kgo refuses its options) is a failure of the run.
func (c *churner) run(ctx context.Context) {
	for round := 0; ; round++ {
		if !sleep(ctx, c.w.ChurnEvery) {
			return
		}
		// Static members come back under one instance id, so each
		// round's member replaces the last one's (KIP-345) if the
		// coordinator still holds it.
		member, err := newGroupMember(c.cluster, c.log, c.w.Group, c.w.Topic, fmt.Sprintf("c%d", round), c.w.Balancer, c.w.instanceID("churn"))
		if err != nil {
			c.failed(err)
			return
		}
		memberContext, leave := context.WithCancel(ctx)
		member.start(memberContext, c.failed)
		c.joined.Add(1)
		stayed := sleep(ctx, c.w.ChurnEvery)
		leave()
		member.stop()
		c.left.Add(1)
		if !stayed {
			return
		}
	}
}
