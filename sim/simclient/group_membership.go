package simclient

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/jepsen/history"
)

// This file is the consumer's side of group membership: FindCoordinator,
// JoinGroup, the leader's assignment, SyncGroup, Heartbeat and LeaveGroup.
// Errors are read as Kafka's AbstractCoordinator reads them: a coordinator
// that moved or is loading is looked up again; a generation or member id
// the coordinator no longer knows means joining again (with no member id
// when the id itself is gone).

// coordinatorMoved reports whether code says the request went to a broker
// that is not (or not yet) the group's coordinator.
func coordinatorMoved(code int16) bool {
	switch code {
	case kerr.NotCoordinator.Code, kerr.CoordinatorNotAvailable.Code, kerr.CoordinatorLoadInProgress.Code:
		return true
	}
	return false
}

// coordinatorLost forgets the coordinator, to be looked up again. A
// member that knew its committed offsets reads them back before it
// commits again (see GroupConsumerConfig.VerifyCommitChance): the
// coordinator may have restarted and forgotten an acknowledged commit.
func (g *GroupConsumer) coordinatorLost(reason error) {
	m := &g.membership
	if m.coordinator == "" {
		return
	}
	g.client.note(fmt.Sprintf("group %s coordinator %s lost: %v", g.config.Group, m.coordinator, reason))
	m.coordinator = ""
	if m.committedKnown {
		m.verifyPending = true
	}
}

// membershipLost reads a membership error (from a heartbeat, a commit, a
// sync): the consumer must rejoin, without its member id if that is gone.
// It reports whether code was one.
func (g *GroupConsumer) membershipLost(code int16) bool {
	if !isMembershipError(code) {
		return false
	}
	m := &g.membership
	switch code {
	case kerr.UnknownMemberID.Code, kerr.FencedInstanceID.Code:
		m.memberID = ""
		m.rejoinNeeded = true
		// A cooperative member drops what it owns (an eager one gives
		// everything up on every rejoin anyway).
		m.cooperative.lost = g.cooperative()
	case kerr.IllegalGeneration.Code:
		m.rejoinNeeded = true
		m.cooperative.lost = g.cooperative()
	case kerr.RebalanceInProgress.Code:
		m.rejoinNeeded = true
	}
	return true
}

// isMembershipError reports whether code says the member must rejoin:
// the codes membershipLost reads.
func isMembershipError(code int16) bool {
	switch code {
	case kerr.UnknownMemberID.Code, kerr.FencedInstanceID.Code, kerr.IllegalGeneration.Code, kerr.RebalanceInProgress.Code:
		return true
	}
	return false
}

// instanceID is group.instance.id as requests carry it: nil for a
// dynamic member.
func (g *GroupConsumer) instanceID() *string {
	if g.config.InstanceID == "" {
		return nil
	}
	return kmsg.StringPtr(g.config.InstanceID)
}

// identity is the member as the history names it: the group.instance.id
// of a static member, the member id of a dynamic one. A static member that
// restarts gets a new member id but stays the same member, with the same
// generation and partitions; naming it by instance keeps the ownership
// check from counting it twice.
func (g *GroupConsumer) identity() string {
	if g.config.InstanceID != "" {
		return g.config.InstanceID
	}
	return g.membership.memberID
}

// findCoordinator asks any broker who coordinates the group.
func (g *GroupConsumer) findCoordinator() {
	g.stats.CoordinatorLookups++
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType = 0 // a group
	req.CoordinatorKeys = []string{g.config.Group}
	g.busy = true
	g.client.RequestAny(req, func(resp kmsg.Response, err error) {
		g.busy = false
		if err == nil {
			answer := resp.(*kmsg.FindCoordinatorResponse)
			switch {
			case len(answer.Coordinators) != 1:
				err = fmt.Errorf("%w: FindCoordinator answered %d keys for one", ErrProtocol, len(answer.Coordinators))
			case answer.Coordinators[0].ErrorCode != 0:
				err = kerr.ErrorForCode(answer.Coordinators[0].ErrorCode)
			default:
				found := answer.Coordinators[0]
				g.membership.coordinator = fmt.Sprintf("%s:%d", found.Host, found.Port)
				g.client.note("group " + g.config.Group + " coordinator is " + g.membership.coordinator)
				g.schedule(0)
				return
			}
		}
		g.stats.Errors++
		g.client.note(fmt.Sprintf("FindCoordinator for %s failed: %v", g.config.Group, err))
		g.backOff()
	})
}

// groupRequestTimeout is how long a JoinGroup or SyncGroup answer may
// take: the coordinator holds them until the rebalance completes.
func (g *GroupConsumer) groupRequestTimeout() time.Duration {
	return g.config.RebalanceTimeout + groupRequestTimeoutMargin
}

// join sends JoinGroup, opening the subscribe op if this is the start of
// a join.
func (g *GroupConsumer) join() {
	if g.subscribe == nil {
		g.subscribe = g.invoke(history.FuncSubscribe, history.Payload{Topics: []string{g.config.Topic}})
	}
	m := &g.membership
	req := g.joinRequest(subscription(g.config.Topic))
	g.busy = true
	rejoin := m.memberID == "" && req.InstanceID != nil && g.joinedOnce
	g.client.RequestAddressWithTimeout(m.coordinator, req, g.groupRequestTimeout(), func(resp kmsg.Response, err error) {
		g.busy = false
		if err != nil {
			g.stats.Errors++
			g.coordinatorLost(err)
			g.backOff()
			return
		}
		g.joinAnswered(resp.(*kmsg.JoinGroupResponse), rejoin)
	})
}

// joinRequest is the member's JoinGroup, offering every assignor with the
// same subscription metadata, and counts the join.
func (g *GroupConsumer) joinRequest(metadata []byte) *kmsg.JoinGroupRequest {
	g.stats.Joins++
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group = g.config.Group
	req.SessionTimeoutMillis = int32(g.config.SessionTimeout / time.Millisecond)
	req.RebalanceTimeoutMillis = int32(g.config.RebalanceTimeout / time.Millisecond)
	req.MemberID = g.membership.memberID
	req.InstanceID = g.instanceID()
	req.ProtocolType = consumerProtocolType
	for _, name := range g.config.Assignors {
		protocol := kmsg.NewJoinGroupRequestProtocol()
		protocol.Name = name
		protocol.Metadata = metadata
		req.Protocols = append(req.Protocols, protocol)
	}
	return req
}

// joinAnswered reads a JoinGroup answer: on success the leader assigns and
// everyone syncs; otherwise the join is tried again. staticRejoin says
// the join was a restarted static member's first.
func (g *GroupConsumer) joinAnswered(answer *kmsg.JoinGroupResponse, staticRejoin bool) {
	m := &g.membership
	code := answer.ErrorCode
	switch {
	case code == 0:
		if answer.Protocol == nil || !knownAssignor(*answer.Protocol) {
			g.stats.Errors++
			g.client.note(fmt.Sprintf("JoinGroup chose protocol %v, which this consumer did not offer", answer.Protocol))
			g.backOff()
			return
		}
		m.memberID, m.generation, m.protocol = answer.MemberID, answer.Generation, *answer.Protocol
		m.leadPartitions = 0 // until lead computes this generation's assignment
		g.joinedOnce = true
		if staticRejoin {
			g.stats.StaticRejoins++
		}
		g.client.note(fmt.Sprintf("joined group %s generation %d as %s (leader %s)", g.config.Group, m.generation, m.memberID, answer.LeaderID))
		if answer.LeaderID == answer.MemberID && answer.SkipAssignment {
			g.stats.SkippedAssignments++
			// A static leader back in a stable group (KIP-814): it
			// leads, but the assignment stands. What it covers is
			// unknown to this new process; the watch asks.
			m.leadPartitions = coverageUnknown
			g.sync(nil)
			return
		}
		if answer.LeaderID == answer.MemberID {
			g.lead(answer.Members, 0)
			return
		}
		g.sync(nil)
	case code == kerr.MemberIDRequired.Code:
		// KIP-394: join again with the id, proving the answer arrived.
		m.memberID = answer.MemberID
		g.schedule(0)
	case code == kerr.UnknownMemberID.Code || code == kerr.FencedInstanceID.Code:
		m.memberID = ""
		g.backOff()
	case coordinatorMoved(code):
		g.coordinatorLost(kerr.ErrorForCode(code))
		g.backOff()
	default:
		// REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, or a refusal
		// (group full, inconsistent protocols): try again later.
		g.stats.Errors++
		g.client.note(fmt.Sprintf("JoinGroup for %s answered %v", g.config.Group, kerr.ErrorForCode(code)))
		g.backOff()
	}
}

// lead computes the generation's assignment as its leader, once the
// client's metadata knows how many partitions the subscribed topic has,
// and syncs with it.
func (g *GroupConsumer) lead(members []kmsg.JoinGroupResponseMember, attempts int) {
	subscribers, err := subscribersOf(members)
	if err != nil {
		g.stats.Errors++
		g.client.note(err.Error())
		g.backOff()
		return
	}
	assignments, covered := g.leaderAssignments(g.membership.protocol, subscribers)
	if covered == 0 {
		if attempts >= leaderMetadataAttemptsMax {
			g.stats.Errors++
			g.client.note(fmt.Sprintf("leader of %s cannot learn %s's partitions; rejoining", g.config.Group, g.config.Topic))
			g.backOff()
			return
		}
		g.busy = true
		g.client.RefreshMetadata(func(error) {
			g.client.After(jitter(g.client, g.config.RetryBackoff), "simclient.group-lead", func() {
				g.busy = false
				g.lead(members, attempts+1)
			})
		})
		return
	}
	g.membership.leadPartitions = g.leadCoverage(g.membership.generation, covered)
	g.sync(assignments)
}

// leaderAssignments computes a generation's assignment as its leader with
// the protocol the group chose: every member's part of the SyncGroup, and
// how many partitions of the subscribed topic it covers; none covered
// means the client's metadata does not know the topic yet, and nothing
// was computed.
func (g *GroupConsumer) leaderAssignments(protocol string, subscribers []subscriber) ([]kmsg.SyncGroupRequestGroupAssignment, int32) {
	partitions := map[string]int32{}
	for _, s := range subscribers {
		for _, topic := range s.topics {
			partitions[topic] = int32(g.client.Partitions(topic))
		}
	}
	if partitions[g.config.Topic] == 0 {
		return nil, 0
	}
	assigned := assignPartitions(protocol, subscribers, partitions)
	var assignments []kmsg.SyncGroupRequestGroupAssignment
	for _, s := range subscribers {
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID = s.memberID
		a.MemberAssignment = encodeAssignment(assigned[s.memberID])
		assignments = append(assignments, a)
	}
	return assignments, partitions[g.config.Topic]
}

// sync sends SyncGroup, with the assignment when leading, and takes the
// member's part of it.
func (g *GroupConsumer) sync(assignments []kmsg.SyncGroupRequestGroupAssignment) {
	m := &g.membership
	req := g.syncRequest(m.generation, m.protocol, assignments)
	g.busy = true
	g.client.RequestAddressWithTimeout(m.coordinator, req, g.groupRequestTimeout(), func(resp kmsg.Response, err error) {
		g.busy = false
		if err != nil {
			g.stats.Errors++
			g.coordinatorLost(err)
			g.backOff()
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
				g.backOff()
				return
			}
			g.joined(assigned)
		case g.membershipLost(code):
			m.rejoinNeeded = false // not joined: the loop joins anyway
			g.schedule(0)
		case coordinatorMoved(code):
			g.coordinatorLost(kerr.ErrorForCode(code))
			g.backOff()
		default:
			g.stats.Errors++
			g.client.note(fmt.Sprintf("SyncGroup for %s answered %v", g.config.Group, kerr.ErrorForCode(code)))
			g.backOff()
		}
	})
}

// syncRequest is the member's SyncGroup for a generation, and counts the
// sync.
func (g *GroupConsumer) syncRequest(generation int32, protocol string, assignments []kmsg.SyncGroupRequestGroupAssignment) *kmsg.SyncGroupRequest {
	g.stats.Syncs++
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group = g.config.Group
	req.Generation = generation
	req.MemberID = g.membership.memberID
	req.InstanceID = g.instanceID()
	req.ProtocolType = kmsg.StringPtr(consumerProtocolType)
	req.Protocol = kmsg.StringPtr(protocol)
	req.GroupAssignment = assignments
	return req
}

// joined takes the generation's assignment: the subscribe op completes,
// heartbeats start, and the loop reads the committed offsets next.
func (g *GroupConsumer) joined(assigned []history.TopicPartition) {
	m := &g.membership
	m.joined = true
	m.assigned = assigned
	m.positions = map[history.TopicPartition]*groupPosition{}
	for _, tp := range assigned {
		m.positions[tp] = &groupPosition{readPosition: readPosition{offset: history.OffsetUnknown}, committed: history.OffsetUnknown}
	}
	m.committedKnown = false
	g.stats.Generations++
	if g.subscribe == nil {
		panic(fmt.Sprintf("simclient: %s synced without a subscribe op open", g.client.Name()))
	}
	g.subscribe.OK(history.Payload{
		Group: g.config.Group, MemberID: g.identity(), Generation: m.generation, Assigned: assigned,
	})
	g.subscribe = nil
	g.client.note(fmt.Sprintf("group %s generation %d assigned %v", g.config.Group, m.generation, assigned))
	g.scheduleHeartbeat(g.config.HeartbeatInterval)
	m.watchDue = g.client.Now() + int64(g.config.MetadataMaxAge)
	g.schedule(0)
}

// scheduleHeartbeat sends the next heartbeat after delay, unless one is
// already scheduled.
func (g *GroupConsumer) scheduleHeartbeat(delay time.Duration) {
	if g.heartbeatScheduled || !g.client.Alive() {
		return
	}
	g.heartbeatScheduled = true
	g.client.After(delay, "simclient.heartbeat", g.heartbeatEvent)
}

// heartbeat keeps the member's session alive while it holds a generation,
// and learns from the answer when it must rejoin. Heartbeats stop when the
// member rejoins or leaves, and start again with the next generation.
func (g *GroupConsumer) heartbeat() {
	m := &g.membership
	if !m.joined || !g.running {
		return
	}
	if left, frozen := g.stalled(); frozen {
		g.scheduleHeartbeat(left)
		return
	}
	// A leader with no partitions of its own has a loop that idles; its
	// watch for new partitions must not.
	g.maybeWatchPartitions()
	// A cooperative member rejoining does not heartbeat, as Kafka's
	// consumer does not while it prepares a rebalance: its JoinGroup
	// keeps it in the group.
	if m.coordinator == "" || g.heartbeatInFlight || m.cooperative.joining {
		g.scheduleHeartbeat(g.config.HeartbeatInterval)
		return
	}
	g.stats.Heartbeats++
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group = g.config.Group
	req.Generation = g.heartbeatGeneration()
	req.MemberID = m.memberID
	req.InstanceID = g.instanceID()
	epoch := m.epoch
	g.heartbeatInFlight = true
	g.client.RequestAddress(m.coordinator, req, func(resp kmsg.Response, err error) {
		g.heartbeatInFlight = false
		g.scheduleHeartbeat(g.config.HeartbeatInterval)
		if epoch != m.epoch {
			return // about a membership since given up
		}
		if err == nil {
			code := resp.(*kmsg.HeartbeatResponse).ErrorCode
			switch {
			case code == 0:
				return
			case g.membershipLost(code):
				g.client.note(fmt.Sprintf("heartbeat: %v; rejoining", kerr.ErrorForCode(code)))
			case coordinatorMoved(code):
				g.coordinatorLost(kerr.ErrorForCode(code))
			default:
				g.client.note(fmt.Sprintf("heartbeat answered %v", kerr.ErrorForCode(code)))
			}
			g.stats.HeartbeatErrors++
		} else {
			// Kafka's consumer marks the coordinator unknown when
			// its connection fails.
			g.stats.HeartbeatErrors++
			g.coordinatorLost(err)
		}
		g.schedule(0)
	})
}

// leave commits the position (once) and leaves the group: a dynamic
// member says so with LeaveGroup; a static member just stops.
func (g *GroupConsumer) leave() {
	m := &g.membership
	if m.joined && m.coordinator != "" && g.dirty() && !m.finalCommitTried {
		m.finalCommitTried = true
		g.commit()
		return
	}
	if g.subscribe != nil {
		g.info(g.subscribe, "left the group while joining it")
		g.subscribe = nil
	}
	if g.config.InstanceID != "" || m.memberID == "" || m.coordinator == "" {
		g.finishLeave()
		return
	}
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = g.config.Group
	member := kmsg.NewLeaveGroupRequestMember()
	member.MemberID = m.memberID
	req.Members = append(req.Members, member)
	g.busy = true
	g.client.RequestAddress(m.coordinator, req, func(resp kmsg.Response, err error) {
		g.busy = false
		if err == nil {
			answer := resp.(*kmsg.LeaveGroupResponse)
			code := answer.ErrorCode
			if code == 0 && len(answer.Members) == 1 {
				code = answer.Members[0].ErrorCode
			}
			err = codeError(code)
		}
		if err != nil {
			// Whatever went wrong, the session timeout removes it.
			g.client.note(fmt.Sprintf("LeaveGroup for %s: %v", g.config.Group, err))
		}
		g.finishLeave()
	})
}
