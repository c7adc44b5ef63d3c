package simclient

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A group's assignment covers the partitions its leader knew of when it
// computed it. When an operator adds partitions to the subscribed topic,
// nothing in the group protocol tells the members: Kafka's consumer leader
// refreshes its metadata once it is metadata.max.age.ms old and, finding
// the topic grown past its assignment, rejoins, which makes the
// coordinator rebalance the group over the new count (ConsumerCoordinator
// compares its assignment snapshot with the metadata snapshot). Only the
// leader watches: it is the member that assigns.
//
// Like Kafka's consumer, it looks when its loop runs (step), not on a
// timer of its own: a watch that is not due schedules nothing. Kafka's
// application calls poll whether or not it was assigned anything; this
// loop idles when it has nothing to read, so the heartbeat looks too.
//
// A static leader that restarts and rejoins a stable group is told to
// lead but skip the assignment (KIP-814): the generation's assignment
// stands, computed by its previous process, so it does not know how many
// partitions that covered. Kafka's consumer leaves that snapshot empty and
// so misses a topic that grew meanwhile; this one asks the coordinator
// for the generation's assignments (DescribeGroups) on its first look.

// coverageUnknown is leadPartitions for a leader that skipped the
// assignment, or computed it twice with different counts, and has not yet
// learned what it covers.
const coverageUnknown = -1

// computedAssignment is what a leader computed for one generation: how
// many partitions it covered, and whether it computed other counts for
// that generation too.
type computedAssignment struct {
	generation int32
	covered    int32
	ambiguous  bool
}

// leadCoverage is leadPartitions for an assignment of generation that
// covers covered partitions, as its leader just computed it. A leader
// whose join was retried within one generation (its answer lost, say)
// computes the assignment again, perhaps over more partitions if its
// metadata caught up meanwhile; the coordinator keeps the first SyncGroup
// it stores, as Kafka's does, and answers the second with it. With two
// counts computed, the leader cannot tell which stands, so it asks
// (learnCoverage); trusting the last, a partition added in between went
// to nobody and no watch ever rebalanced for it (regression
// cluster-group-liveness-212384).
func (g *GroupConsumer) leadCoverage(generation, covered int32) int32 {
	c := &g.membership.computed
	if c.generation == generation {
		c.ambiguous = c.ambiguous || c.covered != covered
	} else {
		c.generation, c.ambiguous = generation, false
	}
	c.covered = covered
	if c.ambiguous {
		return coverageUnknown
	}
	return covered
}

// maybeWatchPartitions refreshes the metadata when the consumer leads a
// generation and its last look is MetadataMaxAge old, and asks for a
// rebalance if the topic has more partitions than the assignment covered.
func (g *GroupConsumer) maybeWatchPartitions() {
	m := &g.membership
	if !m.joined || m.leadPartitions == 0 || m.watching || g.client.Now() < m.watchDue || m.coordinator == "" {
		return
	}
	m.watching = true
	epoch := m.epoch
	finish := func() {
		m.watching = false
		m.watchDue = g.client.Now() + int64(g.config.MetadataMaxAge)
	}
	if m.leadPartitions == coverageUnknown {
		g.learnCoverage(func() {
			if epoch == m.epoch {
				finish()
			}
		})
		return
	}
	g.client.RefreshMetadata(func(error) {
		if epoch != m.epoch {
			return // the generation is over; the next leader looks for itself
		}
		finish()
		if count := int32(g.client.Partitions(g.config.Topic)); count > m.leadPartitions {
			g.stats.PartitionsGrown++
			g.client.note(fmt.Sprintf("%s has %d partitions, the assignment of generation %d covered %d; rejoining",
				g.config.Topic, count, m.generation, m.leadPartitions))
			m.rejoinNeeded = true
			g.schedule(0)
		}
	})
}

// learnCoverage reads the generation's assignments from the coordinator
// and sets leadPartitions to how many of the topic's partitions they
// cover, then calls done. A failed read, a group that is not stable (a
// rebalance is under way, which will assign afresh) or a generation left
// meanwhile leaves it unknown for the next look.
func (g *GroupConsumer) learnCoverage(done func()) {
	m := &g.membership
	epoch, generation := m.epoch, m.generation
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{g.config.Group}
	g.client.RequestAddress(m.coordinator, req, func(resp kmsg.Response, err error) {
		defer done()
		if err != nil || epoch != m.epoch {
			return
		}
		groups := resp.(*kmsg.DescribeGroupsResponse).Groups
		if len(groups) != 1 || groups[0].ErrorCode != 0 || groups[0].State != "Stable" {
			if len(groups) == 1 && groups[0].ErrorCode != 0 {
				g.client.note(fmt.Sprintf("DescribeGroups for %s: %v", g.config.Group, kerr.ErrorForCode(groups[0].ErrorCode)))
			}
			return
		}
		covered := int32(0)
		for _, member := range groups[0].Members {
			assigned, err := decodeAssignment(member.MemberAssignment, g.config.Topic)
			if err != nil {
				g.stats.Errors++
				g.client.note(err.Error())
				return
			}
			for _, tp := range assigned {
				covered = max(covered, tp.Partition+1)
			}
		}
		if m.generation != generation || covered == 0 {
			return
		}
		m.leadPartitions = covered
		g.client.note(fmt.Sprintf("generation %d of %s covers %d partitions of %s", generation, g.config.Group, covered, g.config.Topic))
	})
}
