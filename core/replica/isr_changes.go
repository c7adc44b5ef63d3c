package replica

import (
	"errors"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// How a leader changes its ISR (KIP-497, as Kafka's Partition does it):
//
//   - It shrinks the ISR when a member has not caught up for
//     replica.lag.time.max.ms (MaybeShrinkISR, run on a timer), and grows
//     it when a follower outside it catches up with the high watermark and
//     the start of this leadership (maybeExpandISR, on each fetch).
//   - Either way it does not change the ISR itself: it sends a proposal
//     to the controller through Replication.ProposeISR, at most one at a
//     time, naming the partition state it is based on. The metadata log
//     is the truth: the ISR changes when the committed metadata says so
//     (BecomeLeader with a newer partition epoch), which also settles the
//     proposal. The controller's answer only says whether it committed.
//   - While a proposal is pending, the high watermark is computed over the
//     maximal ISR, the committed ISR plus any member the proposal adds:
//     the controller may already have committed it and may elect it.
//     min.insync.replicas checks use the committed ISR.
//
// Broker epochs (KIP-903) go with every member proposed: the epoch its
// fetches carried, so that the controller refuses a member that has
// restarted since (INELIGIBLE_REPLICA).

// Replication is what a partition needs from its node to replicate.
type Replication interface {
	// ProposeISR sends proposal to the active controller, retrying
	// while the outcome is unknown (no controller, a lost answer), as
	// long as p.ISRProposalPending(proposal) holds, and reports the
	// controller's answer through p.ISRProposalAnswered.
	ProposeISR(p *Partition, proposal ISRProposal)
	// Broker reports what the metadata says of a broker: its registered
	// epoch, and whether it may join an ISR (registered and unfenced).
	Broker(id int32) (epoch int64, eligible bool)
}

// ISRProposal is an ISR change a leader asks the controller for (one
// partition of an AlterPartition request).
type ISRProposal struct {
	// LeaderEpoch and PartitionEpoch are the state the change is based on.
	LeaderEpoch    int32
	PartitionEpoch int32
	// ISR is the proposed ISR, each member with the broker epoch its
	// fetches carried (-1 when unknown, which the controller does not
	// check: a member kept from the current ISR that has not fetched in
	// this leadership yet). The leader itself is listed with -1; the
	// node puts its own broker epoch there.
	ISR []ISRMember

	// id tells proposals apart, so a late answer to an old one is
	// recognized.
	id uint64
}

// ISRMember is one member of a proposed ISR.
type ISRMember struct {
	BrokerID    int32
	BrokerEpoch int64
}

// Members lists the proposed ISR's broker ids.
func (proposal ISRProposal) Members() []int32 {
	ids := make([]int32, 0, len(proposal.ISR))
	for _, m := range proposal.ISR {
		ids = append(ids, m.BrokerID)
	}
	return ids
}

// maximalISR is the committed ISR plus the members a pending proposal
// adds.
func (p *Partition) maximalISR() []int32 {
	if p.proposal == nil {
		return p.isr
	}
	maximal := slices.Clone(p.isr)
	for _, m := range p.proposal.ISR {
		if !contains(maximal, m.BrokerID) {
			maximal = append(maximal, m.BrokerID)
		}
	}
	return maximal
}

// maybeExpandISR proposes adding a follower outside the ISR that has
// caught up: its log reaches the high watermark and the start of this
// leadership (so it holds everything this leader may have committed, and
// nothing of an older epoch that this leader's log does not have), and
// the metadata lets it join.
func (p *Partition) maybeExpandISR(f *followerState) {
	if p.proposal != nil || contains(p.isr, f.id) {
		return
	}
	if f.logEndOffset < p.highWatermark || f.logEndOffset < p.epochStartOffset || !p.eligibleForISR(f) {
		return
	}
	if f.logStartOffset < p.log.DurableStartOffset() {
		// Not before it has followed the leader's log start (it does
		// when an answer shows it, and reports it once durable): a
		// DeleteRecords answered before it joined did not wait for it,
		// and as a leader it would serve the records deleted there
		// again. An answered deletion is durable here, so the leader's
		// durable start is the bar.
		return
	}
	isr := append(slices.Clone(p.isr), f.id)
	p.logger.Info("expanding the ISR", "isr", p.isr, "adding", f.id, "follower_end", f.logEndOffset,
		"high_watermark", p.highWatermark, "epoch_start", p.epochStartOffset)
	p.propose(isr)
}

// MaybeShrinkISR proposes taking out of the ISR every follower that has
// not caught up within replica.lag.time.max.ms: stuck (no fetch) or too
// slow (fetching, but never reaching the leader's end). The node calls it
// on a timer, about every half lag time. Nothing is proposed while a
// proposal is pending.
//
// It also moves the high watermark if it can: a follower outside the ISR
// that the high watermark waited for (mayJoinISRSoon) stops counting once
// it has not caught up for the lag time, with no event to say so; and it
// answers the DeleteRecords a follower whose broker was fenced since held
// up (delete_records.go).
func (p *Partition) MaybeShrinkISR() {
	p.updateHighWatermark()
	p.completeDeletes()
	if !p.IsLeader() || p.proposal != nil || p.replication == nil {
		return
	}
	now := p.w.Clock.Elapsed()
	leaderEnd := p.log.EndOffset()
	var kept, dropped []int32
	for _, id := range p.isr {
		f := p.follower(id)
		if id != p.nodeID && (f == nil || !p.isCaughtUp(f, leaderEnd, now)) {
			dropped = append(dropped, id)
			continue
		}
		kept = append(kept, id)
	}
	if len(dropped) == 0 {
		return
	}
	p.logger.Info("shrinking the ISR", "isr", p.isr, "dropping", dropped, "leader_end", leaderEnd,
		"high_watermark", p.highWatermark)
	p.propose(kept)
}

// propose records isr as the pending proposal and hands it to the node.
func (p *Partition) propose(isr []int32) {
	if !contains(isr, p.nodeID) {
		panic("replica: an ISR proposal must keep the leader")
	}
	p.proposalsMade++
	proposal := &ISRProposal{LeaderEpoch: p.leaderEpoch, PartitionEpoch: p.partitionEpoch, id: p.proposalsMade}
	for _, id := range isr {
		epoch := int64(-1)
		if f := p.follower(id); f != nil {
			epoch = f.brokerEpoch
		}
		proposal.ISR = append(proposal.ISR, ISRMember{BrokerID: id, BrokerEpoch: epoch})
	}
	p.proposal = proposal
	p.replication.ProposeISR(p, *proposal)
}

// ISRProposalPending reports whether proposal is still the one this
// leader waits on; the node drops a proposal that is not.
func (p *Partition) ISRProposalPending(proposal ISRProposal) bool {
	return p.IsLeader() && p.proposal != nil && p.proposal.id == proposal.id
}

// ISRProposalAnswered applies the controller's answer to proposal:
// err is nil when it committed, with the partition epoch it committed
// at. Following Kafka:
//
//   - committed: nothing changes until the metadata shows it (the pending
//     proposal keeps the maximal ISR meanwhile), except that a commit that
//     changed nothing (the ISR was already the proposed one) settles it;
//   - INELIGIBLE_REPLICA, OPERATION_NOT_ATTEMPTED: the controller did not
//     apply it and says the state it was based on is current, so it is
//     dropped and the leader may propose again;
//   - anything else (FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, an
//     unknown topic, NOT_LEADER_OR_FOLLOWER, INVALID_REQUEST): the metadata
//     this leader has is behind, so the proposal stays pending until the
//     metadata catches up, and no other is made meanwhile.
func (p *Partition) ISRProposalAnswered(proposal ISRProposal, partitionEpoch int32, err error) {
	if !p.ISRProposalPending(proposal) {
		return
	}
	switch {
	case err == nil:
		if partitionEpoch <= proposal.PartitionEpoch {
			p.proposal = nil
		}
	case errors.Is(err, kerr.IneligibleReplica), errors.Is(err, kerr.OperationNotAttempted):
		p.logger.Info("ISR change refused; back to the committed ISR", "proposed", proposal.Members(), "isr", p.isr, "error", err)
		p.proposal = nil
	default:
		p.logger.Info("ISR change refused; waiting for newer metadata", "proposed", proposal.Members(), "error", err)
	}
}

// leaderMetadataChanged applies a newer partition state to the current
// leadership: the committed ISR may have changed (by this leader's
// proposal or by the controller, which takes fenced brokers out of every
// ISR), which settles any pending proposal.
func (p *Partition) leaderMetadataChanged() {
	if p.proposal != nil && p.partitionEpoch > p.proposal.PartitionEpoch {
		p.proposal = nil
	}
	p.trackFollowers()
	p.updateHighWatermark()
	p.failAcksIfUnderMinISR()
}
