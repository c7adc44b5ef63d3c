package simclient

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/jepsen/history"
)

// This file is the cooperative rebalance protocol (KIP-429), which a
// consumer follows when every assignor it offers is cooperative (only
// cooperative-sticky is), as Kafka's consumer decides it: franz-go's
// default, and the Java consumer's since 3.0.
//
// An eager member gives up every partition before it rejoins and reads
// nothing until SyncGroup hands out the next assignment. A cooperative
// member keeps reading, and committing, what it owns while its join is
// under way: the join runs beside the consumer's loop (a lane of its own:
// JoinGroup, the leader's assignment, SyncGroup), and its subscription
// names what the member owns, so the leader's cooperative-sticky assignor
// leaves those partitions where they are and withholds the ones it moves.
// Once SyncGroup answers, the loop applies the assignment between two of
// its requests: it keeps what stays, reads the committed offsets of what
// was added, and commits and gives up what was taken away, then rejoins
// at once so the next generation can hand those partitions to their new
// owner.
//
// Commits go with the generation the member applied last. While the
// group is only preparing the rebalance, the coordinator still takes them
// (Kafka's does); once this member's JoinGroup has been answered, the
// group is in a new generation and the loop holds its commits until it
// applies that generation's assignment. A coordinator that says the
// membership is gone (an unknown member id, a stale generation outside a
// rebalance) makes the member drop its partitions without committing
// them, KIP-429's partitions lost, and join afresh.
//
// The history: a cooperative member's subscribe is recorded when the
// loop applies an assignment (invoked and ok at once, on the consumer's
// process, with what it owns in that generation: what it kept and what
// was added), since its reading does not stop for the join.

// cooperativeMembership is what a cooperative member knows of its
// rebalance under way.
type cooperativeMembership struct {
	// joining is set while the member's join is under way beside its
	// reading: JoinGroup or SyncGroup in flight, the leader waiting for
	// metadata, or a backoff between tries.
	joining bool
	// joinAnswered is set once the join's JoinGroup was answered: the
	// group is in a generation whose assignment the member has not
	// applied, and its commits wait. joinGeneration and joinProtocol
	// are that generation and the protocol the group chose.
	joinAnswered   bool
	joinGeneration int32
	joinProtocol   string
	// next is SyncGroup's assignment, waiting for the loop to apply it.
	next *nextAssignment
	// revoking are the partitions the last assignment took away: no
	// longer read, committed once, then dropped.
	revoking          []history.TopicPartition
	revokeCommitTried bool
	// lost is set when the coordinator said the membership is gone.
	lost bool
	// rejoinAfter is set when the join was a static member's coming
	// back: it rejoins once it has applied its assignment (see
	// cooperativeJoinAnswered).
	rejoinAfter bool
}

// nextAssignment is one generation's assignment on its way to the loop.
type nextAssignment struct {
	generation int32
	protocol   string
	assigned   []history.TopicPartition
	// leadPartitions is groupMembership.leadPartitions for the
	// generation.
	leadPartitions int32
}

// cooperative reports whether the consumer rebalances cooperatively: every
// assignor it offers is cooperative.
func (g *GroupConsumer) cooperative() bool {
	for _, name := range g.config.Assignors {
		if name != AssignorCooperativeSticky {
			return false
		}
	}
	return true
}

// rebalancing reports whether a cooperative member's membership is being
// replaced: a join is under way, its assignment is waiting to be applied,
// or epoch (taken when a request went out) is gone. A membership error
// answered then is about the generation being replaced.
func (g *GroupConsumer) rebalancing(epoch int) bool {
	c := &g.membership.cooperative
	return c.joining || c.next != nil || epoch != g.membership.epoch
}

// committable lists the partitions whose positions a commit covers: the
// assigned ones and, for a cooperative member, the ones it is giving up.
func (g *GroupConsumer) committable() []history.TopicPartition {
	m := &g.membership
	if len(m.cooperative.revoking) == 0 {
		return m.assigned
	}
	return slices.Concat(m.assigned, m.cooperative.revoking)
}

// heartbeatGeneration is the generation a heartbeat names: the one whose
// assignment SyncGroup handed out, applied or not.
func (g *GroupConsumer) heartbeatGeneration() int32 {
	if next := g.membership.cooperative.next; next != nil {
		return next.generation
	}
	return g.membership.generation
}

// stepCooperative is step for a cooperative member: what the membership
// lacks first, then what its partitions need, while a join may be under
// way beside it.
func (g *GroupConsumer) stepCooperative() {
	m := &g.membership
	c := &m.cooperative
	switch {
	case g.leaving && c.joining:
		// The join's end steps again.
	case c.lost:
		g.losePartitions()
	case c.next != nil:
		g.applyAssignment()
	case g.leaving:
		g.leave()
	case m.coordinator == "":
		g.findCoordinator()
	case len(c.revoking) > 0:
		if g.dirty() && !c.revokeCommitTried {
			c.revokeCommitTried = true
			g.commit()
			return
		}
		g.dropRevoked()
	case !c.joining && (!m.joined || m.rejoinNeeded):
		if m.joined && g.dirty() && !m.finalCommitTried {
			// Commit what was read before joining (Kafka's consumer
			// does, as a join begins), then read on while joining.
			m.finalCommitTried = true
			g.commit()
			return
		}
		g.startCooperativeJoin()
		g.schedule(0)
	case len(m.assigned) == 0:
		// Nothing to read: wait for the join, or a heartbeat to say
		// rebalance.
	case !m.committedKnown || m.verifyPending || len(g.readBack) > 0:
		g.fetchCommitted()
	case len(g.unknownPositions()) > 0:
		g.listEarliest(g.unknownPositions())
	case g.dirty() && !c.joinAnswered:
		g.commit()
	default:
		g.fetch()
	}
}

// startCooperativeJoin begins a join beside the loop.
func (g *GroupConsumer) startCooperativeJoin() {
	m := &g.membership
	m.cooperative = cooperativeMembership{joining: true}
	m.rejoinNeeded, m.finalCommitTried = false, false
	// Answers to heartbeats and watches of the generation being
	// replaced are moot now.
	m.epoch++
	m.watching = false
	g.cooperativeJoin()
}

// cooperativeJoin sends the join's JoinGroup, naming what the member owns.
func (g *GroupConsumer) cooperativeJoin() {
	m := &g.membership
	if m.coordinator == "" {
		g.endCooperativeJoin(true)
		return
	}
	req := g.joinRequest(cooperativeSubscription(g.config.Topic, m.assigned, m.generation))
	rejoin := m.memberID == "" && req.InstanceID != nil && g.joinedOnce
	g.client.RequestAddressWithTimeout(m.coordinator, req, g.groupRequestTimeout(), func(resp kmsg.Response, err error) {
		g.whenThawed(func() {
			if err != nil {
				g.stats.Errors++
				g.coordinatorLost(err)
				g.endCooperativeJoin(true)
				return
			}
			g.cooperativeJoinAnswered(resp.(*kmsg.JoinGroupResponse), rejoin)
		})
	})
}

// cooperativeJoinAnswered reads the join's JoinGroup answer, as
// joinAnswered does for an eager member.
func (g *GroupConsumer) cooperativeJoinAnswered(answer *kmsg.JoinGroupResponse, staticRejoin bool) {
	m := &g.membership
	c := &m.cooperative
	code := answer.ErrorCode
	switch {
	case code == 0:
		if answer.Protocol == nil || *answer.Protocol != AssignorCooperativeSticky {
			g.stats.Errors++
			g.client.note(fmt.Sprintf("JoinGroup chose protocol %v, which this consumer did not offer", answer.Protocol))
			g.endCooperativeJoin(true)
			return
		}
		m.memberID = answer.MemberID
		c.joinAnswered, c.joinGeneration, c.joinProtocol = true, answer.Generation, *answer.Protocol
		g.joinedOnce = true
		if staticRejoin {
			g.stats.StaticRejoins++
			// A static member that comes back with no member id (its
			// process restarted, or the coordinator forgot it) is
			// handed the assignment its instance last had, without a
			// rebalance (KIP-345), and the membership it replaces may
			// have been about to give some of those partitions up:
			// withheld from everyone, they would wait for a rebalance
			// nothing else brings (seeds 2829 and 129543). So it asks
			// for one once it has its assignment. (Kafka's consumer
			// does not; its group waits for the next rebalance.)
			c.rejoinAfter = true
		}
		g.client.note(fmt.Sprintf("joined group %s generation %d as %s (leader %s), owning %v",
			g.config.Group, answer.Generation, answer.MemberID, answer.LeaderID, m.assigned))
		switch {
		case answer.LeaderID == answer.MemberID && answer.SkipAssignment:
			g.stats.SkippedAssignments++
			g.cooperativeSync(nil, coverageUnknown)
		case answer.LeaderID == answer.MemberID:
			g.cooperativeLead(answer.Members, 0)
		default:
			g.cooperativeSync(nil, 0)
		}
	case code == kerr.MemberIDRequired.Code:
		m.memberID = answer.MemberID
		g.cooperativeJoin()
	case code == kerr.UnknownMemberID.Code || code == kerr.FencedInstanceID.Code:
		m.memberID = ""
		c.lost = true
		g.endCooperativeJoin(false)
	case coordinatorMoved(code):
		g.coordinatorLost(kerr.ErrorForCode(code))
		g.endCooperativeJoin(true)
	default:
		g.stats.Errors++
		g.client.note(fmt.Sprintf("JoinGroup for %s answered %v", g.config.Group, kerr.ErrorForCode(code)))
		g.endCooperativeJoin(true)
	}
}

// cooperativeLead computes the generation's assignment as its leader, as
// lead does, without holding up the loop while its metadata catches up.
func (g *GroupConsumer) cooperativeLead(members []kmsg.JoinGroupResponseMember, attempts int) {
	subscribers, err := subscribersOf(members)
	if err != nil {
		g.stats.Errors++
		g.client.note(err.Error())
		g.endCooperativeJoin(true)
		return
	}
	assignments, covered := g.leaderAssignments(g.membership.cooperative.joinProtocol, subscribers)
	if covered > 0 {
		g.cooperativeSync(assignments, g.leadCoverage(g.membership.cooperative.joinGeneration, covered))
		return
	}
	if attempts >= leaderMetadataAttemptsMax {
		g.stats.Errors++
		g.client.note(fmt.Sprintf("leader of %s cannot learn %s's partitions; rejoining", g.config.Group, g.config.Topic))
		g.endCooperativeJoin(true)
		return
	}
	g.client.RefreshMetadata(func(error) {
		g.client.After(jitter(g.client, g.config.RetryBackoff), "simclient.group-lead", func() {
			g.whenThawed(func() { g.cooperativeLead(members, attempts+1) })
		})
	})
}

// cooperativeSync sends the join's SyncGroup and hands its assignment to
// the loop. leadPartitions is what the assignment covers when this member
// computed it.
func (g *GroupConsumer) cooperativeSync(assignments []kmsg.SyncGroupRequestGroupAssignment, leadPartitions int32) {
	m := &g.membership
	c := &m.cooperative
	if m.coordinator == "" {
		g.endCooperativeJoin(true)
		return
	}
	req := g.syncRequest(c.joinGeneration, c.joinProtocol, assignments)
	g.client.RequestAddressWithTimeout(m.coordinator, req, g.groupRequestTimeout(), func(resp kmsg.Response, err error) {
		g.whenThawed(func() {
			if err != nil {
				g.stats.Errors++
				g.coordinatorLost(err)
				g.endCooperativeJoin(true)
				return
			}
			answer := resp.(*kmsg.SyncGroupResponse)
			code := answer.ErrorCode
			switch {
			case code == 0:
				assigned, err := decodeAssignment(answer.MemberAssignment, g.config.Topic)
				if err != nil {
					g.stats.Errors++
					g.client.note(err.Error())
					g.endCooperativeJoin(true)
					return
				}
				c.next = &nextAssignment{generation: c.joinGeneration, protocol: c.joinProtocol, assigned: assigned, leadPartitions: leadPartitions}
				g.endCooperativeJoin(false)
				g.scheduleHeartbeat(g.config.HeartbeatInterval)
			case code == kerr.RebalanceInProgress.Code:
				// Another rebalance began: join it, still owning
				// what was owned.
				c.joinAnswered = false
				g.cooperativeJoin()
			case isMembershipError(code):
				if code != kerr.IllegalGeneration.Code {
					m.memberID = ""
				}
				c.lost = true
				g.endCooperativeJoin(false)
			case coordinatorMoved(code):
				g.coordinatorLost(kerr.ErrorForCode(code))
				g.endCooperativeJoin(true)
			default:
				g.stats.Errors++
				g.client.note(fmt.Sprintf("SyncGroup for %s answered %v", g.config.Group, kerr.ErrorForCode(code)))
				g.endCooperativeJoin(true)
			}
		})
	})
}

// endCooperativeJoin ends the join under way; rejoin asks the loop to try
// again after a backoff.
func (g *GroupConsumer) endCooperativeJoin(rejoin bool) {
	m := &g.membership
	m.cooperative.joining, m.cooperative.joinAnswered = false, false
	if rejoin {
		m.rejoinNeeded = true
		g.backOff()
		return
	}
	g.schedule(0)
}

// whenThawed runs fn now, or once a stall ends: a frozen process answers
// nothing, its join included.
func (g *GroupConsumer) whenThawed(fn func()) {
	if left, frozen := g.stalled(); frozen {
		g.client.After(left, "simclient.group-join", func() { g.whenThawed(fn) })
		return
	}
	fn()
}

// applyAssignment takes the generation SyncGroup handed out: the member
// keeps what stays, places what was added from its committed offsets, and
// gives up what was taken away (committed, then dropped, see step).
func (g *GroupConsumer) applyAssignment() {
	m := &g.membership
	c := &m.cooperative
	next := c.next
	c.next = nil
	var added, revoked []history.TopicPartition
	for _, tp := range next.assigned {
		if !slices.Contains(m.assigned, tp) {
			added = append(added, tp)
		}
	}
	for _, tp := range m.assigned {
		if !slices.Contains(next.assigned, tp) {
			revoked = append(revoked, tp)
		}
	}
	m.epoch++
	m.joined, m.generation, m.protocol = true, next.generation, next.protocol
	m.assigned = next.assigned
	m.leadPartitions, m.watching = next.leadPartitions, false
	m.watchDue = g.client.Now() + int64(g.config.MetadataMaxAge)
	for _, tp := range added {
		m.positions[tp] = &groupPosition{readPosition: readPosition{offset: history.OffsetUnknown}, committed: history.OffsetUnknown}
	}
	if len(added) > 0 {
		m.committedKnown = false // the loop reads where the added ones start
	}
	c.revoking, c.revokeCommitTried = revoked, false
	if c.rejoinAfter {
		c.rejoinAfter = false
		m.rejoinNeeded = true
	}
	g.stats.Generations++
	g.stats.PartitionsAdded += int64(len(added))
	g.stats.PartitionsRevoked += int64(len(revoked))
	payload := history.Payload{Group: g.config.Group, MemberID: g.identity(), Generation: m.generation, Assigned: m.assigned}
	g.invoke(history.FuncSubscribe, history.Payload{Topics: []string{g.config.Topic}}).OK(payload)
	g.client.note(fmt.Sprintf("group %s generation %d assigned %v (added %v, revoked %v)", g.config.Group, m.generation, m.assigned, added, revoked))
	// Heartbeats go on now that the member holds a generation, as after
	// an eager join (joined). The SyncGroup answer asked for one already,
	// but a heartbeat still scheduled from before (held by a pause, say)
	// refused that, then ran before this and, finding no generation held,
	// scheduled none: without this the member never heartbeats again
	// (cluster seed 2229658).
	g.scheduleHeartbeat(g.config.HeartbeatInterval)
	g.schedule(0)
}

// dropRevoked lets go of the partitions the last assignment took away and
// rejoins, so the next generation can give them to their new owners.
func (g *GroupConsumer) dropRevoked() {
	m := &g.membership
	for _, tp := range m.cooperative.revoking {
		delete(m.positions, tp)
	}
	m.cooperative.revoking = nil
	m.rejoinNeeded = true
	g.schedule(0)
}

// losePartitions drops every partition without committing, once the
// coordinator said the membership is gone (KIP-429's partitions lost),
// and joins afresh.
func (g *GroupConsumer) losePartitions() {
	m := &g.membership
	g.stats.PartitionsLost += int64(len(m.assigned) + len(m.cooperative.revoking))
	g.client.note(fmt.Sprintf("group %s membership lost; dropping %v", g.config.Group, m.assigned))
	g.revoke()
	g.schedule(0)
}
