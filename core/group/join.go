package group

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Client identifies the client behind a request, as DescribeGroups and the
// persisted group metadata report it.
type Client struct {
	// ID is the request header's client.id ("" when null).
	ID string
	// Host is where the connection comes from.
	Host string
}

// JoinGroup handles a JoinGroup request (versions 0-9), answering through
// done now or once the rebalance it starts or joins completes.
//
// A member without a member id is new: from v4 (KIP-394) it is handed a
// generated id with MEMBER_ID_REQUIRED and must join again with it, so
// that a client that times out and retries never leaves a ghost member
// behind; before v4 it joins at once. A static member (group.instance.id,
// KIP-345) that joins without a member id replaces the member its
// instance had, keeping its assignment; the old member id is fenced. A
// join parks until every known member has rejoined (or the rebalance
// timeout passes), then every member hears the new generation and the
// leader gets the member list to compute assignments from.
func (c *Coordinator) JoinGroup(req *kmsg.JoinGroupRequest, client Client, done func(*kmsg.JoinGroupResponse)) {
	fail := func(memberID string, err error) { done(joinErrorResponse(memberID, err)) }
	if req.Group == "" {
		fail(req.MemberID, kerr.InvalidGroupID)
		return
	}
	p, err := c.serving(req.Group)
	if err != nil {
		fail(req.MemberID, err)
		return
	}
	sessionTimeout := int64(req.SessionTimeoutMillis)
	if sessionTimeout < c.config.MinSessionTimeout.Milliseconds() || sessionTimeout > c.config.MaxSessionTimeout.Milliseconds() {
		fail(req.MemberID, kerr.InvalidSessionTimeout)
		return
	}
	j := &joinRequest{
		request:            req,
		client:             client,
		protocols:          protocolsOf(req.Protocols),
		sessionTimeoutMs:   req.SessionTimeoutMillis,
		rebalanceTimeoutMs: req.RebalanceTimeoutMillis,
		done:               done,
	}
	if req.Version == 0 || j.rebalanceTimeoutMs < 0 {
		// v0 has no rebalance timeout: Kafka uses the session
		// timeout, and so does a nonsensical negative one here.
		j.rebalanceTimeoutMs = req.SessionTimeoutMillis
	}
	isNewMember := req.MemberID == ""
	g := p.groups[req.Group]
	if g == nil {
		if !isNewMember {
			// A member id for a group that does not exist (any more).
			fail(req.MemberID, kerr.UnknownMemberID)
			return
		}
		if g, err = c.createGroup(p, req.Group); err != nil {
			fail(req.MemberID, err)
			return
		}
	}
	switch {
	case !c.acceptJoiningMember(g, req.MemberID):
		// A member of a group over its size that rejoins too late is
		// shed, pending or not.
		if m := g.byID[req.MemberID]; m != nil {
			c.removeMemberAndUpdateGroup(g, m, "the group is over group.max.size")
		}
		g.forgetPendingMember(req.MemberID)
		fail("", kerr.GroupMaxSizeReached)
	case isNewMember:
		c.joinNewMember(g, j)
	default:
		c.joinCurrentMember(g, j)
	}
	if g.is(statePreparingRebalance) {
		c.maybeCompleteJoin(g)
	}
}

// joinRequest is a JoinGroup being handled.
type joinRequest struct {
	request            *kmsg.JoinGroupRequest
	client             Client
	protocols          []protocol
	sessionTimeoutMs   int32
	rebalanceTimeoutMs int32
	done               func(*kmsg.JoinGroupResponse)
}

// acceptJoiningMember applies group.max.size as Kafka does: a member
// already waiting in the rebalance, or already in the group, stays; a new
// one gets in while there is room. While a rebalance is prepared the
// members that rejoined are what counts, so a group that grew past a
// lowered limit sheds the members that rejoin last.
func (c *Coordinator) acceptJoiningMember(g *group, memberID string) bool {
	limit := c.config.maxMembers()
	switch g.state {
	case statePreparingRebalance:
		m := g.byID[memberID]
		return (m != nil && m.awaitingJoin()) || g.awaitingJoinCount < limit
	case stateCompletingRebalance, stateStable:
		return g.has(memberID) || len(g.members) < limit
	}
	return true // Empty or Dead
}

// joinNewMember handles a JoinGroup without a member id.
func (c *Coordinator) joinNewMember(g *group, j *joinRequest) {
	req := j.request
	switch {
	case g.is(stateDead):
		// The group is being deleted; the client retries and finds it
		// gone, or this node no longer its coordinator.
		j.done(joinErrorResponse("", kerr.CoordinatorNotAvailable))
		return
	case !g.supportsProtocols(req.ProtocolType, j.protocols):
		j.done(joinErrorResponse("", kerr.InconsistentGroupProtocol))
		return
	}
	newID := newMemberID(c.w.Entropy, j.client.ID, req.InstanceID)
	if req.InstanceID != nil {
		if oldID, known := g.currentStaticMemberID(*req.InstanceID); known {
			c.replaceStaticMember(g, oldID, newID, j)
			return
		}
		c.addMemberAndRebalance(g, newID, j)
		return
	}
	if req.Version < 4 {
		c.addMemberAndRebalance(g, newID, j)
		return
	}
	// KIP-394: the member must come back with this id, proving it
	// received the answer; until it does, the rebalance waits for it
	// (for at most its session timeout).
	if len(g.pendingMembers) >= pendingMembersPerGroupMax {
		j.done(joinErrorResponse("", kerr.GroupMaxSizeReached))
		return
	}
	g.pendingMembers[newID] = c.w.Clock.AfterFunc(sessionTimeoutOf(j.sessionTimeoutMs), func() {
		if !c.live(g) || !g.isPending(newID) {
			return
		}
		g.forgetPendingMember(newID)
		if g.is(statePreparingRebalance) {
			c.maybeCompleteJoin(g)
		}
	})
	j.done(joinErrorResponse(newID, kerr.MemberIDRequired))
}

// joinCurrentMember handles a JoinGroup that names its member id.
func (c *Coordinator) joinCurrentMember(g *group, j *joinRequest) {
	req := j.request
	memberID := req.MemberID
	switch {
	case g.is(stateDead):
		j.done(joinErrorResponse(memberID, kerr.CoordinatorNotAvailable))
		return
	case !g.supportsProtocols(req.ProtocolType, j.protocols):
		j.done(joinErrorResponse(memberID, kerr.InconsistentGroupProtocol))
		return
	case g.isPending(memberID):
		if req.InstanceID != nil {
			// Pending ids are only handed to dynamic members; a
			// static member must not claim one (Kafka treats this
			// as impossible).
			j.done(joinErrorResponse(memberID, kerr.UnknownMemberID))
			return
		}
		c.addMemberAndRebalance(g, memberID, j)
		return
	}
	if err := validateCurrentMember(g, memberID, req.InstanceID); err != nil {
		j.done(joinErrorResponse(memberID, err))
		return
	}
	m := g.byID[memberID]
	switch g.state {
	case statePreparingRebalance:
		c.updateMemberAndRebalance(g, m, j, "member rejoined")
	case stateCompletingRebalance:
		if m.matches(j.protocols) {
			// It missed the answer to its last join (a timeout, a
			// retry): tell it the current generation again.
			var members []kmsg.JoinGroupResponseMember
			if g.isLeader(memberID) {
				members = g.currentMemberMetadata()
			}
			j.done(g.joinResponse(m, members, g.leaderID))
			return
		}
		c.updateMemberAndRebalance(g, m, j, "member rejoined with new metadata")
	case stateStable:
		changed := !m.matches(j.protocols) && !c.canaryOn(CanaryRejoinIgnoresSubscription)
		if g.isLeader(memberID) || changed {
			// The leader rejoins to force a new assignment (its
			// subscribed topics' metadata changed); anyone else,
			// because its subscription did.
			c.updateMemberAndRebalance(g, m, j, "leader rejoined or metadata changed")
			return
		}
		j.done(g.joinResponse(m, nil, g.leaderID))
	default:
		// Empty: a member id from an older life of the group.
		j.done(joinErrorResponse(memberID, kerr.UnknownMemberID))
	}
}

// validateCurrentMember checks that memberID is a member and, for a
// static member, the current holder of its instance id.
func validateCurrentMember(g *group, memberID string, instanceID *string) error {
	if instanceID != nil {
		current, known := g.currentStaticMemberID(*instanceID)
		switch {
		case !known:
			return kerr.UnknownMemberID
		case current != memberID:
			// Another process with the same group.instance.id
			// joined since: this one is a zombie and must stop.
			return kerr.FencedInstanceID
		}
	}
	if !g.has(memberID) {
		return kerr.UnknownMemberID
	}
	return nil
}

// addMemberAndRebalance makes a new member of the group, parks its join
// and starts a rebalance if none is under way.
func (c *Coordinator) addMemberAndRebalance(g *group, memberID string, j *joinRequest) {
	if len(g.members) >= membersPerGroupMax {
		j.done(joinErrorResponse("", kerr.GroupMaxSizeReached))
		return
	}
	req := j.request
	m := &member{
		id:                 memberID,
		instanceID:         cloneString(req.InstanceID),
		clientID:           j.client.ID,
		clientHost:         j.client.Host,
		rebalanceTimeoutMs: j.rebalanceTimeoutMs,
		sessionTimeoutMs:   j.sessionTimeoutMs,
		protocolType:       req.ProtocolType,
		protocols:          j.protocols,
		isNew:              true,
	}
	if g.is(statePreparingRebalance) && g.generation == 0 {
		g.newMemberAdded = true
	}
	g.add(m, j.done)
	c.scheduleSession(g, m, newMemberJoinTimeout)
	c.maybePrepareRebalance(g, j.withClientReason("member "+memberID+" joined"))
}

// updateMemberAndRebalance takes a known member's rejoin and starts a
// rebalance if none is under way.
func (c *Coordinator) updateMemberAndRebalance(g *group, m *member, j *joinRequest, reason string) {
	c.answerJoinError(g, m, m.id, kerr.RebalanceInProgress) // an earlier join it gave up on
	g.updateMember(m, j.protocols, j.rebalanceTimeoutMs, j.sessionTimeoutMs, j.done)
	c.maybePrepareRebalance(g, j.withClientReason(reason))
}

// withClientReason adds the reason a v8+ client gave for joining to the
// rebalance's reason, which the log line that starts it names.
func (j *joinRequest) withClientReason(reason string) string {
	if r := j.request.Reason; r != nil && *r != "" {
		return reason + " (client: " + *r + ")"
	}
	return reason
}

// replaceStaticMember handles a static member that joins without a member
// id while its instance id is known: a restart of the same instance. It
// takes over the member, with a new id and the old assignment; the old
// id is fenced. A stable group does not rebalance for it (the point of
// static membership) unless its protocols change the group's choice: the
// new id is persisted and the member is told the current generation.
//
// If the member is the group's leader, it must not compute an assignment
// a stable group would never hand out, yet it is the member that watches
// the subscribed topics for new partitions. Before v9 it is told the old
// leader id, so it takes itself for a follower, and until the next
// rebalance nobody watches. From v9 (KIP-814) it is told that it leads,
// with the members, and SkipAssignment: lead, but do not assign.
func (c *Coordinator) replaceStaticMember(g *group, oldID, newID string, j *joinRequest) {
	instanceID := *j.request.InstanceID
	currentLeader := g.leaderID
	old := g.byID[oldID]
	c.answerJoinError(g, old, oldID, kerr.FencedInstanceID)
	c.answerSyncError(old, kerr.FencedInstanceID)
	m := g.replaceStaticMember(instanceID, oldID, newID)
	c.scheduleSession(g, m, c.sessionCheckTimeout(m))
	oldProtocols, oldRebalanceMs, oldSessionMs := m.protocols, m.rebalanceTimeoutMs, m.sessionTimeoutMs
	g.updateMember(m, j.protocols, j.rebalanceTimeoutMs, j.sessionTimeoutMs, j.done)

	switch g.state {
	case stateStable:
		if g.selectProtocol() != g.protocolName {
			c.maybePrepareRebalance(g, "static member "+instanceID+" rejoined with other protocols")
			return
		}
		assignment := map[string][]byte{}
		for _, other := range g.members {
			assignment[other.id] = other.assignment
		}
		generation := g.generation
		c.storeGroup(g, assignment, func(err error) {
			if !c.live(g) || g.byID[newID] != m || !g.is(stateStable) || g.generation != generation || !m.awaitingJoin() {
				return // a rebalance, an unload or an expiry took over its join
			}
			if err != nil {
				// Not persisted: undo, so the old id stays valid.
				joinDone := m.joinDone
				g.updateMember(m, oldProtocols, oldRebalanceMs, oldSessionMs, nil)
				g.replaceStaticMember(instanceID, newID, oldID)
				c.scheduleSession(g, m, c.sessionCheckTimeout(m))
				resp := g.joinResponse(m, nil, currentLeader)
				resp.MemberID = ""
				resp.ErrorCode = kafkaCode(err)
				joinDone(resp)
				return
			}
			c.answerJoin(g, m, staticRejoinResponse(g, m, currentLeader, j.request.Version))
		})
	case stateCompletingRebalance:
		// The leader may already be assigning to the old id; start
		// over so the new id gets an assignment.
		c.prepareRebalance(g, "static member "+instanceID+" rejoined during the assignment")
	case statePreparingRebalance:
		// Its join is parked with the others.
	default:
		panic("group: static member " + instanceID + " known in a group in state " + g.state.String())
	}
}

// staticRejoinResponse answers a static member that replaced its old id in
// a stable group (see replaceStaticMember).
func staticRejoinResponse(g *group, m *member, previousLeader string, version int16) *kmsg.JoinGroupResponse {
	if version >= skipAssignmentVersion && g.isLeader(m.id) {
		resp := g.joinResponse(m, g.currentMemberMetadata(), m.id)
		resp.SkipAssignment = true
		return resp
	}
	return g.joinResponse(m, nil, previousLeader)
}

// skipAssignmentVersion is the JoinGroup version from which a returning
// static leader is told it leads, with SkipAssignment (KIP-814).
const skipAssignmentVersion = 9

// joinResponse is a successful JoinGroup answer for m: the generation, its
// protocol, the leader, and (for the leader) the members.
func (g *group) joinResponse(m *member, members []kmsg.JoinGroupResponseMember, leaderID string) *kmsg.JoinGroupResponse {
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.Generation = g.generation
	resp.ProtocolType = cloneString(&g.protocolType)
	resp.Protocol = cloneString(&g.protocolName)
	resp.LeaderID = leaderID
	resp.MemberID = m.id
	resp.Members = members
	return resp
}

// joinErrorResponse is a failed JoinGroup answer: generation -1 and the
// member id the client should use next ("" to start over).
func joinErrorResponse(memberID string, err error) *kmsg.JoinGroupResponse {
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.ErrorCode = kafkaCode(err)
	resp.Generation = -1
	resp.MemberID = memberID
	return resp
}

// answerJoin answers m's parked join and restarts its session timer: from
// now on it is expected to heartbeat.
func (c *Coordinator) answerJoin(g *group, m *member, resp *kmsg.JoinGroupResponse) {
	if !m.awaitingJoin() {
		return
	}
	done := m.joinDone
	g.setJoinDone(m, nil)
	c.scheduleSession(g, m, c.sessionCheckTimeout(m))
	done(resp)
}

// answerJoinError answers m's parked join, if any, with err.
func (c *Coordinator) answerJoinError(g *group, m *member, memberID string, err error) {
	if !m.awaitingJoin() {
		return
	}
	done := m.joinDone
	g.setJoinDone(m, nil)
	done(joinErrorResponse(memberID, err))
}

func cloneString(s *string) *string {
	if s == nil {
		return nil
	}
	clone := *s
	return &clone
}
