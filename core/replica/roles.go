package replica

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A replica's role, as the metadata log decides it (the broker applies each
// committed change through BecomeLeader and BecomeFollower):
//
//   - none: just opened; it serves nothing and fetches nothing.
//   - leader: it takes produces, serves consumers below the high watermark
//     and followers up to the log end, tracks every follower, and asks the
//     controller to change the ISR (leader_fetch.go, isr_changes.go).
//   - follower: it fetches from the leader and serves nothing
//     (follower_fetch.go). A follower of leader -1 waits: the partition
//     has no leader, or the metadata names this node but the node may not
//     lead yet (it is not registered, or fenced).
//
// Epochs only go forward: the metadata log never moves a partition back,
// so a call with an older leader epoch or partition epoch is a bug, and
// panics.
type role int

const (
	roleNone role = iota
	roleLeader
	roleFollower
)

// NoteUncleanElection takes the leader epoch of the partition's latest
// unclean election from the metadata (0 for none), before the broker
// applies the leadership: the follower of such a leader must know before
// it fetches, since the leader may lack what this replica counted as
// committed. It never forgets one, whatever the topic's config says by
// now: an operator turns unclean.leader.election.enable on to bring a
// partition back and off once it is back, and a follower that was away
// meanwhile still has to cut below its high watermark.
func (p *Partition) NoteUncleanElection(epoch int32) {
	p.uncleanEpoch = max(p.uncleanEpoch, epoch)
}

// BecomeLeader makes this replica the leader for leaderEpoch, as the
// metadata log decided. Called again for the same leadership, it applies a
// newer partition epoch: the ISR the controller committed, perhaps the
// one this leader proposed.
//
// A new leadership starts at the log end: batches it appends are stamped
// with leaderEpoch (the log records the epoch's start with the first one;
// EndOffsetForEpoch answers as if Kafka's eager entry were there), every
// follower's state starts unknown, and the high watermark starts where
// this replica had it as a follower, moving up once the ISR has fetched
// and no former leader may still serve (formers; takeover.go). A
// continuing leadership waits for no former leader formers leaves out.
func (p *Partition) BecomeLeader(leaderEpoch, partitionEpoch int32, replicas, isr []int32, formers []FormerLeader) {
	p.checkEpochsForward(leaderEpoch, partitionEpoch)
	continuing := p.role == roleLeader && p.leaderEpoch == leaderEpoch
	p.leaderEpoch, p.partitionEpoch = leaderEpoch, partitionEpoch
	p.noteDeparted(replicas)
	p.replicas, p.isr = keptCopy(p.replicas, replicas), keptCopy(p.isr, isr)
	if continuing {
		p.keepFormerLeaders(formers)
		p.leaderMetadataChanged()
		p.completeDeletes() // a follower out of the ISR holds no delete up
		return
	}
	p.stopFollowing()
	p.role = roleLeader
	p.leader = p.nodeID
	p.generation++
	p.epochStartOffset = p.log.EndOffset()
	p.proposal = nil
	p.followers = nil
	p.trackFollowers()
	p.startTakeover(formers)
	p.eventLogger().Info("became leader", "topic_id", p.TopicID, "leader_epoch", leaderEpoch, "partition_epoch", partitionEpoch,
		"isr", isr, "epoch_start", p.epochStartOffset, "high_watermark", p.highWatermark)
	p.updateHighWatermark()
	p.leadershipChanged()
}

// BecomeFollower makes this replica a follower of leader in leaderEpoch,
// as the metadata log decided; leader -1 means there is nobody to follow
// for now. A leader that steps down fails its waiting acks=all produces
// with NOT_LEADER_OR_FOLLOWER (clients retry with the new leader; the
// batches may still commit there, as in Kafka). Called again for the same
// leader and epoch, it only records the newer partition state.
func (p *Partition) BecomeFollower(leader int32, leaderEpoch, partitionEpoch int32, replicas, isr []int32) {
	if leader == p.nodeID {
		panic(fmt.Sprintf("replica: %s-%d asked to follow itself", p.Topic, p.Index))
	}
	p.checkEpochsForward(leaderEpoch, partitionEpoch)
	continuing := p.role == roleFollower && p.leader == leader && p.leaderEpoch == leaderEpoch
	p.leaderEpoch, p.partitionEpoch = leaderEpoch, partitionEpoch
	p.noteDeparted(replicas)
	p.replicas, p.isr = keptCopy(p.replicas, replicas), keptCopy(p.isr, isr)
	if continuing {
		return
	}
	wasLeader := p.IsLeader()
	p.stopLeading()
	p.role = roleFollower
	p.leader = leader
	p.generation++
	p.held = nil
	p.leaderHighWatermark = -1
	p.logger.Info("became follower", "leader", leader, "leader_epoch", leaderEpoch,
		"partition_epoch", partitionEpoch, "log_end", p.log.EndOffset(), "high_watermark", p.highWatermark)
	if leader >= 0 && p.w.Canaries.On(CanaryTruncateToHighWatermark) {
		// The KIP-101 bug: trust the high watermark instead of the
		// leader's epochs. It may lag the leader's, so this can cut
		// committed records; and what stays above a divergence is
		// never found (the canary's fetches carry no epoch).
		p.truncate(p.highWatermark, "new leader (truncating to the high watermark)")
	}
	if wasLeader {
		p.leadershipChanged()
	}
	p.notifyFetchReady()
}

// keptCopy returns the partition's own copy of want: held when it already
// holds the same ids, else a fresh copy. The metadata restates a
// partition's replicas and ISR with every change to it, mostly unchanged,
// and the partition never changes its copies in place, so an equal one can
// stay.
func keptCopy(held, want []int32) []int32 {
	if slices.Equal(held, want) && (held == nil) == (want == nil) {
		return held
	}
	return slices.Clone(want)
}

// checkEpochsForward asserts that the metadata does not move back.
func (p *Partition) checkEpochsForward(leaderEpoch, partitionEpoch int32) {
	if leaderEpoch < p.leaderEpoch {
		panic(fmt.Sprintf("replica: %s-%d leader epoch went back from %d to %d", p.Topic, p.Index, p.leaderEpoch, leaderEpoch))
	}
	if partitionEpoch < p.partitionEpoch {
		panic(fmt.Sprintf("replica: %s-%d partition epoch went back from %d to %d", p.Topic, p.Index, p.partitionEpoch, partitionEpoch))
	}
}

// stopLeading ends a leadership, if this replica had one: waiting acks=all
// produces fail, and the follower tracking and any ISR proposal are
// forgotten (an answer to the proposal will find nothing to apply).
func (p *Partition) stopLeading() {
	if p.role != roleLeader {
		return
	}
	p.role = roleNone
	p.leader = -1
	p.followers = nil
	p.stopTakeover()
	p.proposal = nil
	p.failAckWaiters(kerr.NotLeaderForPartition)
	p.completeDeletes()
}

// stopFollowing ends a following, if this replica had one: records held
// for a later append are dropped (the new role decides what the log gets).
func (p *Partition) stopFollowing() {
	if p.role != roleFollower {
		return
	}
	p.role = roleNone
	p.held = nil
	p.leaderHighWatermark = -1
}

// OnLeadershipChange registers f to run whenever IsLeader may have changed
// value: the replica became leader, stepped down, finished recovery, or
// closed.
func (p *Partition) OnLeadershipChange(f func()) {
	p.leadershipListeners = append(p.leadershipListeners, f)
}

func (p *Partition) leadershipChanged() {
	for _, f := range p.leadershipListeners {
		f()
	}
}

// IsLeader reports whether this replica leads its partition and can serve
// as leader: open, and done with recovery.
func (p *Partition) IsLeader() bool { return !p.closed && p.recovered && p.role == roleLeader }

// Recovered reports whether the replica has taken up its directory: what
// recovery found is durable and so is its partition.metadata. Until then
// it neither leads nor fetches.
func (p *Partition) Recovered() bool { return p.recovered }

// IsFollower reports whether this replica follows a leader it should
// fetch from.
func (p *Partition) IsFollower() bool { return !p.closed && p.role == roleFollower && p.leader >= 0 }

// Leader is the leader the metadata names (this node when it leads), -1
// when none.
func (p *Partition) Leader() int32 { return p.leader }

// LeaderEpoch is the epoch of the current leadership.
func (p *Partition) LeaderEpoch() int32 { return p.leaderEpoch }

// PartitionEpoch is the partition state's version in the metadata.
func (p *Partition) PartitionEpoch() int32 { return p.partitionEpoch }

// ISR is the committed in-sync replica set.
func (p *Partition) ISR() []int32 { return slices.Clone(p.isr) }
