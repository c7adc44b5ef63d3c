package controller

import (
	"fmt"
	"slices"

	"sluice/core"
	"sluice/core/metadata"
)

// Leader election and ISR changes when a broker leaves (fenced, shutting
// down, or registering a new incarnation) or comes back (unfenced), as
// KRaft's PartitionChangeBuilder decides them:
//
//   - a leaving broker is taken out of every ISR it is in, except that an
//     ISR never becomes empty: its last member stays, so the metadata
//     still names who holds every acknowledged write;
//   - a partition it led gets as leader the first replica, in replica
//     order, that is in the remaining ISR and may lead (registered,
//     unfenced, not shutting down) - under BUGGIFY, any of them;
//   - if none may, the partition becomes leaderless (leader -1) with its
//     ISR kept, unless its topic sets unclean.leader.election.enable: then
//     the first replica that may lead does, with an ISR of itself alone,
//     and whatever only the old ISR had is lost (logged as an unclean
//     election);
//   - when a broker is unfenced, every leaderless partition is elected
//     again, so one whose ISR holds that broker gets it as leader.
//
// The records are PartitionChangeRecords; applying one bumps the leader
// epoch when the leader changes and the partition epoch always.

// candidates says who may lead while an operation is planned: the brokers
// as the image has them, minus the one the operation takes out (leaving)
// and plus the one it unfences (joining); -1 for neither.
type candidates struct {
	c       *Controller
	leaving int32
	joining int32
}

// mayLead reports whether broker id may lead a partition.
func (v candidates) mayLead(id int32) bool {
	if id < 0 || id == v.leaving || v.c.isShuttingDown(id) {
		return false
	}
	if id == v.joining {
		return true
	}
	broker, registered := v.c.image.Brokers[id]
	return registered && !broker.Fenced
}

// removeFromPartitions returns the changes that take broker leaving out of
// every partition: out of each ISR it is in, and out of each leadership.
func (c *Controller) removeFromPartitions(leaving int32) []metadata.Record {
	view := candidates{c: c, leaving: leaving, joining: -1}
	var records []metadata.Record
	c.eachPartition(func(p *metadata.Partition) {
		if p.Leader != leaving && !slices.Contains(p.ISR, leaving) {
			return
		}
		isr := minus(p.ISR, []int32{leaving})
		if len(isr) == 0 {
			isr = p.ISR
		}
		leader := p.Leader
		if !view.mayLead(leader) {
			leader, isr = c.elect(p, isr, view)
		}
		if record, changed := c.partitionChange(p, leader, isr, view); changed {
			records = append(records, record)
		}
	})
	return records
}

// electLeaderless returns the changes that give leaderless partitions a
// leader, now that broker joining may lead.
func (c *Controller) electLeaderless(joining int32) []metadata.Record {
	view := candidates{c: c, leaving: -1, joining: joining}
	var records []metadata.Record
	c.eachPartition(func(p *metadata.Partition) {
		if p.Leader >= 0 {
			return
		}
		leader, isr := c.elect(p, p.ISR, view)
		if record, changed := c.partitionChange(p, leader, isr, view); changed {
			records = append(records, record)
		}
	})
	return records
}

// electLeaderlessUncleanly returns the elections a change turning
// unclean.leader.election.enable on for topic makes possible: a leader
// for each of its leaderless partitions, from outside the ISR where no
// ISR member may lead. They go out with the change itself, so that the
// runbook's first step — turn it on to bring back a partition whose
// in-sync replicas are all down — brings it back at once, rather than at
// the next broker's return (Kafka's controller runs these every
// unclean.leader.election.interval.ms).
func (c *Controller) electLeaderlessUncleanly(topic string) []metadata.Record {
	t, ok := c.image.Topics[topic]
	if !ok {
		return nil
	}
	view := candidates{c: c, leaving: -1, joining: -1}
	var records []metadata.Record
	for _, p := range t.Partitions {
		// ElectLeaders' unclean election: for a leaderless partition
		// only, and only where some replica may lead.
		if record, f := c.planElection(topic, p.Index, true, view); f == nil {
			records = append(records, *record)
		}
	}
	return records
}

// elect picks p's leader from isr (see the rules above) and returns it
// with the ISR it leads: isr itself, a single member after an unclean
// election, or -1 and isr when nobody may lead.
func (c *Controller) elect(p *metadata.Partition, isr []int32, view candidates) (int32, []int32) {
	return c.electAllowingUnclean(p, isr, view, c.uncleanElectionEnabled(p.Topic.Name))
}

// electAllowingUnclean is elect with the topic's unclean leader election
// setting given.
func (c *Controller) electAllowingUnclean(p *metadata.Partition, isr []int32, view candidates, unclean bool) (int32, []int32) {
	eligible := 0
	first := int32(-1)
	for _, replica := range p.Replicas {
		if slices.Contains(isr, replica) && view.mayLead(replica) {
			if eligible == 0 {
				first = replica
			}
			eligible++
		}
	}
	if eligible > 1 && c.w.Buggify.Hit(core.BuggifyControllerLeaderNotPreferred) {
		// Legal: any ISR member that may lead holds every committed
		// write, so Kafka only prefers the first for balance. The
		// choice is the same set with the same rules; only which one
		// differs, and the record carries it to every node.
		return eligibleAt(p, isr, view, core.RandomIntn(c.w.Entropy, eligible)), isr
	}
	if eligible > 0 {
		return first, isr
	}
	if unclean {
		// The replicas a reassignment is adding come last: they may
		// have copied little or nothing yet, and the loss an unclean
		// election brings is whatever its leader lacks (Kafka's
		// controller takes the replica order as it is, target first).
		for _, replica := range slices.Concat(minus(p.Replicas, p.AddingReplicas), p.AddingReplicas) {
			if view.mayLead(replica) {
				c.eventLogger().Warn(UncleanElectionMessage,
					"topic", p.Topic.Name, "partition", p.Index, "leader", replica, "previous_isr", p.ISR)
				return replica, []int32{replica}
			}
		}
	}
	return -1, isr
}

// eligibleAt returns the n-th (from 0) replica of p, in replica order,
// that is in isr and may lead.
func eligibleAt(p *metadata.Partition, isr []int32, view candidates, n int) int32 {
	for _, replica := range p.Replicas {
		if slices.Contains(isr, replica) && view.mayLead(replica) {
			if n == 0 {
				return replica
			}
			n--
		}
	}
	panic(fmt.Sprintf("controller: %s-%d has fewer eligible leaders than counted", p.Topic.Name, p.Index))
}

// UncleanElectionMessage is what the controller logs (a warning) when it
// chooses a leader outside the ISR; the simulator counts these lines.
const UncleanElectionMessage = "unclean leader election: a replica outside the ISR leads, and writes only the ISR had are lost"

// uncleanElectionEnabled reads unclean.leader.election.enable for a topic.
func (c *Controller) uncleanElectionEnabled(topic string) bool {
	return effectiveTopicConfig(metadata.ConfigUncleanLeaderElection, c.image.TopicConfigs(topic), c.config.TopicDefaults) == "true" ||
		c.w.Canaries.On(CanaryUncleanElection)
}

// eachPartition visits every partition, topics by name, partitions by
// index, so the records built come out in a fixed order.
func (c *Controller) eachPartition(visit func(p *metadata.Partition)) {
	for _, name := range c.image.TopicNames() {
		for _, p := range c.image.Topics[name].Partitions {
			visit(p)
		}
	}
}

// partitionChange builds the record moving p to leader and isr, completing
// p's reassignment if that ISR holds its whole target (reassign.go), and
// reports false when that changes nothing. view says who may lead, should
// the completion take the leader out.
func (c *Controller) partitionChange(p *metadata.Partition, leader int32, isr []int32, view candidates) (metadata.Record, bool) {
	return c.changeTo(p, partitionTarget{
		leader: leader, isr: isr,
		replicas: p.Replicas, adding: p.AddingReplicas, removing: p.RemovingReplicas,
	}, view)
}

// partitionTarget is the state a change moves a partition to.
type partitionTarget struct {
	leader   int32
	isr      []int32
	replicas []int32
	// adding and removing are the reassignment in progress (see
	// metadata.Partition), empty when none.
	adding, removing []int32
}

// changeTo builds the record moving p to s (completing a reassignment s
// allows), and reports false when that changes nothing.
func (c *Controller) changeTo(p *metadata.Partition, s partitionTarget, view candidates) (metadata.Record, bool) {
	// A leader from outside the ISR it replaces was elected uncleanly
	// (elect's last resort): every node must know, for good
	// (metadata.Partition.UncleanEpoch). A completion's own election
	// is from the ISR, and never follows an unclean one (whose ISR is
	// the new leader alone, so the whole target is that leader).
	unclean := s.leader >= 0 && s.leader != p.Leader && !slices.Contains(p.ISR, s.leader)
	elected := s.leader
	s = c.completeReassignment(p, s, view)
	switch {
	case unclean && s.leader != elected:
		violated("%s-%d: a reassignment completed on an unclean election", p.Topic.Name, p.Index)
	case len(s.isr) == 0:
		violated("%s-%d: an ISR may never become empty", p.Topic.Name, p.Index)
	case s.leader >= 0 && !slices.Contains(s.isr, s.leader):
		violated("%s-%d: leader %d is not in the ISR %v", p.Topic.Name, p.Index, s.leader, s.isr)
	case s.leader >= 0 && !slices.Contains(s.replicas, s.leader):
		violated("%s-%d: leader %d is not a replica %v", p.Topic.Name, p.Index, s.leader, s.replicas)
	}
	change := &metadata.PartitionChangeRecord{TopicID: p.Topic.ID, Partition: p.Index}
	changed := false
	// A change that takes replicas away bumps the leader epoch even if
	// the leader stays, as Kafka's controller does: the leader then
	// refuses the fetches of a removed replica whose broker has not yet
	// applied its removal. Without it such a replica, added back in the
	// meantime, could join the ISR on fetches from the log its broker
	// is about to delete, and lead the partition empty.
	if s.leader != p.Leader || len(minus(p.Replicas, s.replicas)) > 0 {
		change.Leader = &s.leader
		change.Unclean = unclean
		changed = true
	}
	if !slices.Equal(s.isr, p.ISR) {
		change.ISR = slices.Clone(s.isr)
		changed = true
	}
	if !slices.Equal(s.replicas, p.Replicas) || !slices.Equal(s.adding, p.AddingReplicas) || !slices.Equal(s.removing, p.RemovingReplicas) {
		change.Replicas = slices.Clone(s.replicas)
		change.AddingReplicas = nilIfEmpty(s.adding)
		change.RemovingReplicas = nilIfEmpty(s.removing)
		changed = true
	}
	return metadata.Record{PartitionChange: change}, changed
}

func nilIfEmpty(ids []int32) []int32 {
	if len(ids) == 0 {
		return nil
	}
	return slices.Clone(ids)
}

// minus returns ids without those in gone, in order.
func minus(ids, gone []int32) []int32 {
	kept := make([]int32, 0, len(ids))
	for _, id := range ids {
		if !slices.Contains(gone, id) {
			kept = append(kept, id)
		}
	}
	return kept
}
