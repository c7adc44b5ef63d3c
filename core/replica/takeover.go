package replica

import (
	"slices"
	"time"
)

// A leader deposed without being fenced — a preferred-leader election, a
// reassignment, a controlled shutdown moved its leadership away — may not
// know it yet: its metadata lags, or it is cut off from the controller but
// not from its clients. Until it learns, it answers consumers and
// OffsetFetch on its controller lease (core/broker, lifecycle.go) from the
// log it has, which stops at its own high watermark. If the new leader
// meanwhile exposed records the old one never saw (moved the high
// watermark over them, acknowledged a commit), a client would read them
// there and then, from the old leader, read that they are not there: a
// stale read, found by the simulator (scenarios/regressions/
// cluster-nonlinearizable-committed-offset-5171018.txt).
//
// So a new leader holds its high watermark where its election found it
// while any former leader may still serve: the takeover. Each former
// leader stops counting once
//
//   - it fetches from this leader at this leader epoch: it has applied
//     the election, and so every record before it, its own deposition
//     included, and serves the partition no more;
//   - the controller finds it caught up with every record that deposed it
//     (a BrokerCaughtUpRecord): the same, for a former leader that is no
//     longer a replica (a reassignment moved the leader off it) or whose
//     fetches do not arrive;
//   - its broker is fenced or gone from the metadata: the controller
//     fences a broker a session after its last heartbeat, by which its
//     lease (half a session by its own clock) has run out, or at the end
//     of a controlled shutdown, once it has applied what deposed it; and
//     a broker renews its lease only once it has applied what deposed it
//     (core/controller, catch_up.go);
//   - its Until passes: the broker that tracks former leaders sets it a
//     session after it learned of the deposition, by its own clock, which
//     is after the controller committed it. The old leader's last renewal
//     was sent before that commit, and its lease lasts half a session by
//     its clock: over, for any two clocks within a factor of two.
//
// Nothing else waits: the election, a continuing leadership's ISR
// changes, reads below the high watermark. Acks=all produces and offset
// commits wait for the high watermark as always, and DeleteRecords for the
// low watermark, which promises nothing during a takeover either.

// FormerLeader is a broker that led the partition before this leadership
// and may still believe it does, until Until (Clock.Elapsed) at the latest.
type FormerLeader struct {
	ID    int32
	Until time.Duration
}

// startTakeover notes, for a new leadership, the former leaders it waits
// for, and arms the timer that ends the wait if nothing else does first.
func (p *Partition) startTakeover(formers []FormerLeader) {
	p.stopTakeover()
	now := p.w.Clock.Elapsed()
	for _, f := range formers {
		if f.ID != p.nodeID && f.Until > now {
			p.formerLeaders = append(p.formerLeaders, f)
		}
	}
	if len(p.formerLeaders) == 0 {
		return
	}
	last := slices.MaxFunc(p.formerLeaders, func(a, b FormerLeader) int { return int(a.Until - b.Until) }).Until
	generation := p.generation
	p.takeoverTimer = p.w.Clock.AfterFunc(last-now, func() {
		p.takeoverTimer = nil
		if !p.closed && p.generation == generation {
			p.FormerLeadersMayHaveGone()
		}
	})
	p.eventLogger().Info("takeover: waiting for former leaders", "former_leaders", p.formerLeaderIDs(), "high_watermark", p.highWatermark)
}

// stopTakeover forgets the former leaders: the leadership is over.
func (p *Partition) stopTakeover() {
	p.formerLeaders = nil
	if p.takeoverTimer != nil {
		p.takeoverTimer.Stop()
		p.takeoverTimer = nil
	}
}

// takingOver reports whether a former leader may still serve. It forgets
// those that no longer may; once none is left, the takeover is over.
func (p *Partition) takingOver() bool {
	if len(p.formerLeaders) == 0 {
		return false
	}
	if p.w.Canaries.On(CanaryTakeoverIgnoresFormerLeaders) {
		p.endTakeover()
		return false
	}
	now := p.w.Clock.Elapsed()
	return !p.dropFormerLeaders(func(f FormerLeader) bool {
		return f.Until <= now || !p.brokerAlive(f.ID)
	})
}

// dropFormerLeaders forgets the former leaders drop picks, and ends the
// takeover if none is left. It reports whether none is.
func (p *Partition) dropFormerLeaders(drop func(FormerLeader) bool) bool {
	if len(p.formerLeaders) == 0 {
		return true
	}
	p.formerLeaders = slices.DeleteFunc(p.formerLeaders, drop)
	if len(p.formerLeaders) > 0 {
		return false
	}
	p.endTakeover()
	return true
}

// endTakeover ends a takeover none of whose former leaders is left.
func (p *Partition) endTakeover() {
	p.stopTakeover()
	p.eventLogger().Info("takeover over", "leader_epoch", p.leaderEpoch, "high_watermark", p.highWatermark)
}

// formerLeaderFetched notes that broker id fetched at this leadership's
// epoch, or was found caught up: it knows it no longer leads. It reports
// whether that ended the takeover.
func (p *Partition) formerLeaderFetched(id int32) bool {
	return len(p.formerLeaders) > 0 && p.dropFormerLeaders(func(f FormerLeader) bool { return f.ID == id })
}

// keepFormerLeaders forgets, in a continuing leadership, the former
// leaders formers no longer names: the broker's metadata no longer counts
// them deposed (a snapshot replaced its image, holding a caught-up record
// it never applied as one) or alive.
func (p *Partition) keepFormerLeaders(formers []FormerLeader) {
	p.formerLeadersMoved(func(f FormerLeader) bool {
		return !slices.ContainsFunc(formers, func(named FormerLeader) bool { return named.ID == f.ID })
	})
}

// FormerLeaderCaughtUp tells a leader that broker id has applied every
// record that took a leadership from it (core/controller heartbeat.go):
// it knows it no longer leads.
func (p *Partition) FormerLeaderCaughtUp(id int32) {
	p.formerLeadersMoved(func(f FormerLeader) bool { return f.ID == id })
}

// FormerLeadersMayHaveGone tells a leader that brokers were fenced or
// left the metadata: a former leader among them no longer holds its
// takeover up.
func (p *Partition) FormerLeadersMayHaveGone() {
	p.formerLeadersMoved(func(FormerLeader) bool { return false })
}

// formerLeadersMoved, during a takeover, forgets the former leaders gone
// picks and lets the high watermark and waiting deletions move if no
// former leader may still serve.
func (p *Partition) formerLeadersMoved(gone func(FormerLeader) bool) {
	if len(p.formerLeaders) == 0 || !p.dropFormerLeaders(gone) && p.takingOver() {
		return
	}
	p.updateHighWatermark()
	p.completeDeletes()
}

func (p *Partition) formerLeaderIDs() []int32 {
	ids := make([]int32, len(p.formerLeaders))
	for i, f := range p.formerLeaders {
		ids[i] = f.ID
	}
	return ids
}
