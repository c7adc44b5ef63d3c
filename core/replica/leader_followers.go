package replica

import (
	"time"

	"sluice/core"
)

// followerState is what a leader knows of one follower, from its fetches
// (Kafka's Replica and ReplicaState).
type followerState struct {
	id int32
	// logEndOffset is the offset of the follower's last fetch: everything
	// below it is in its log (synced, under the durable default: a
	// follower fetches only from a synced end). -1 until its first fetch
	// in this leadership.
	logEndOffset int64
	// logStartOffset is the log start its last fetch reported, -1
	// until its first fetch in this leadership: a DeleteRecords is
	// answered once every ISR member's has reached the new start.
	logStartOffset int64
	// brokerEpoch is the broker epoch its last fetch carried (KIP-903),
	// -1 when unknown.
	brokerEpoch int64
	// caughtUp and lastCaughtUp say when the follower last had everything
	// the leader had (see recordFetch); caughtUp is false when it never
	// did in this leadership.
	caughtUp     bool
	lastCaughtUp time.Duration
	// lastFetch and lastFetchLeaderEnd are when its previous fetch came
	// and the leader's log end then.
	lastFetch          time.Duration
	lastFetchLeaderEnd int64
}

// trackFollowers makes sure every other replica has a followerState, in
// replica order, keeping the states of those it had and dropping those no
// longer replicas. A new one starts unknown; one in the ISR counts as
// caught up now, so that it has replica.lag.time.max.ms to fetch before a
// new leader shrinks the ISR (Kafka's resetReplicaState).
func (p *Partition) trackFollowers() {
	if p.tracksEveryFollower() {
		return // as it would rebuild them: the metadata restates replicas with every change
	}
	now := p.w.Clock.Elapsed()
	var tracked []*followerState
	for _, id := range p.replicas {
		if id == p.nodeID {
			continue
		}
		f := p.follower(id)
		if f == nil {
			f = &followerState{id: id, logEndOffset: -1, logStartOffset: -1, brokerEpoch: -1, lastFetchLeaderEnd: -1}
			if contains(p.isr, id) {
				f.caughtUp, f.lastCaughtUp = true, now
			}
		}
		tracked = append(tracked, f)
	}
	p.followers = tracked
}

// tracksEveryFollower reports whether followers are already the states of
// the other replicas, in replica order.
func (p *Partition) tracksEveryFollower() bool {
	i := 0
	for _, id := range p.replicas {
		if id == p.nodeID {
			continue
		}
		if i == len(p.followers) || p.followers[i].id != id {
			return false
		}
		i++
	}
	return i == len(p.followers)
}

// follower finds a follower's state, nil if id is not a follower.
func (p *Partition) follower(id int32) *followerState {
	for _, f := range p.followers {
		if f.id == id {
			return f
		}
	}
	return nil
}

// recordFetch notes a follower's fetch from fetchOffset, arriving when the
// leader's log ended at leaderEnd. A follower is caught up when its fetch
// reaches the leader's log end; one that reaches the end the leader had at
// its previous fetch was caught up then (Kafka's updateFetchStateOrThrow):
// under steady writes a follower is always a little behind, and this is
// how it still counts as keeping up.
func (p *Partition) recordFetch(f *followerState, fetchOffset, leaderEnd int64, brokerEpoch int64) {
	now := p.w.Clock.Elapsed()
	switch {
	case fetchOffset >= leaderEnd:
		f.caughtUp, f.lastCaughtUp = true, max(f.lastCaughtUp, now)
	case f.lastFetchLeaderEnd >= 0 && fetchOffset >= f.lastFetchLeaderEnd:
		f.caughtUp, f.lastCaughtUp = true, max(f.lastCaughtUp, f.lastFetch)
	}
	f.lastFetchLeaderEnd = leaderEnd
	f.lastFetch = now
	f.logEndOffset = fetchOffset
	f.brokerEpoch = brokerEpoch
}

// isCaughtUp reports whether a follower keeps up: it has the leader's whole
// log, or had it within replica.lag.time.max.ms.
func (p *Partition) isCaughtUp(f *followerState, leaderEnd int64, now time.Duration) bool {
	if f.logEndOffset == leaderEnd {
		return true
	}
	lagMax := p.config.ReplicaLagTimeMax
	if p.w.Buggify.Hit(core.BuggifyReplicaLagShort) {
		lagMax /= 10
	}
	return f.caughtUp && now-f.lastCaughtUp <= lagMax
}

// mayJoinISRSoon reports whether a follower outside the ISR is caught up
// and eligible, so that the high watermark waits for it (Kafka's
// shouldWaitForReplicaToJoinIsr): otherwise, with an ISR of the leader
// alone and steady writes, it could chase the high watermark forever.
func (p *Partition) mayJoinISRSoon(f *followerState, leaderEnd int64, now time.Duration) bool {
	return p.isCaughtUp(f, leaderEnd, now) && p.eligibleForISR(f)
}

// eligibleForISR reports whether the metadata lets a follower join the ISR
// (KIP-841, KIP-903): its broker is registered and unfenced, and the
// broker epoch its fetches carry is the registered one, so its log is the
// one this leader watched catch up and not that of an earlier process
// that has since restarted and lost what it had not synced. An unknown
// epoch (-1) does not pass: Sluice's followers always send theirs once
// registered.
func (p *Partition) eligibleForISR(f *followerState) bool {
	if p.replication == nil || f.brokerEpoch < 0 {
		return false
	}
	epoch, eligible := p.replication.Broker(f.id)
	return eligible && epoch == f.brokerEpoch
}

func contains(ids []int32, id int32) bool {
	for _, other := range ids {
		if other == id {
			return true
		}
	}
	return false
}
