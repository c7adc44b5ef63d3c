package harness

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"
)

// churner is an operator scaling the consumer group out and back in, as
// an autoscaler or a deploy does: every Workload.ChurnEvery one more
// member joins (a rebalance hands it some partitions) and, ChurnEvery
// later, goes. Under the eager protocol every rebalance stops the whole
// group; under the cooperative one (Workload.Balancer) only the
// partitions that move stop, each revoked by its owner in one rebalance
// and assigned in the next, which is the path KIP-429 added to the
// coordinator. The members it starts record their ops like the others, so
// every checker holds them to the same promises.
//
// How a member goes is Workload.ChurnExit. One that leaves closes (kgo's
// Close: it commits nothing more, revokes, and sends LeaveGroup, so the
// group rebalances again at once). One that crashes has its connections
// cut with nothing more said (crashSwitch): the coordinator must expire
// it after session.timeout.ms and hand its partitions on, and the others
// resume them from what it committed — the path a consumer killed by its
// machine takes. Static members (Workload.Static) do not leave when
// closed either: the next round's member takes the last one's place under
// the same group.instance.id, or the coordinator expires it after its
// session.
type churner struct {
	cluster *Cluster
	log     *historyLog
	w       Workload
	failed  func(error)
	background

	joined, left, crashed atomic.Int64
}

func newChurner(cluster *Cluster, log *historyLog, w Workload, failed func(error)) *churner {
	return &churner{cluster: cluster, log: log, w: w, failed: failed}
}

func (c *churner) start(ctx context.Context) { c.background.start(ctx, c.run) }

// run alternates: wait, add a member; wait, let it go. A member that
// cannot be made (kgo refuses its options) is a failure of the run.
func (c *churner) run(ctx context.Context) {
	for round := 0; ; round++ {
		if !sleep(ctx, c.w.ChurnEvery) {
			return
		}
		crashes := c.w.ChurnExit.crashes(round)
		var extra []kgo.Opt
		var crash *crashSwitch
		if crashes {
			crash = newCrashSwitch()
			extra = append(extra, kgo.Dialer(crash.dial))
		}
		// Static members come back under one instance id, so each
		// round's member replaces the last one's (KIP-345) if the
		// coordinator still holds it.
		member, err := newGroupMember(c.cluster, c.log, c.w.Group, c.w.Topic, fmt.Sprintf("c%d", round), c.w.Balancer, c.w.instanceID("churn"), extra...)
		if err != nil {
			c.failed(err)
			return
		}
		memberContext, stopLoop := context.WithCancel(ctx)
		member.start(memberContext, c.failed)
		c.joined.Add(1)
		stayed := sleep(ctx, c.w.ChurnEvery)
		if crash != nil && stayed {
			// Cut first, then stop the loop: whatever the member was
			// doing at the crash (a commit in flight, say) fails or
			// stays unknown, as it would for a killed process, and the
			// Close below can reach no broker.
			crash.flip()
			c.crashed.Add(1)
		} else {
			c.left.Add(1)
		}
		stopLoop()
		member.stop()
		if !stayed {
			return
		}
	}
}
