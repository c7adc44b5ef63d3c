package group

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
)

// SyncGroup handles a SyncGroup request (versions 0-5), answering through
// done now or once the leader's assignment is persisted.
//
// After a rebalance every member sends SyncGroup; the leader's carries the
// assignment it computed (opaque bytes, one per member; members it left
// out get an empty one). The assignment is written to the log with the
// generation's members, and only then does every member get its part and
// the group become Stable — so a coordinator that fails over hands out the
// same assignment. A member syncing once the group is Stable gets its
// part at once.
func (c *Coordinator) SyncGroup(req *kmsg.SyncGroupRequest, done func(*kmsg.SyncGroupResponse)) {
	fail := func(err error) { done(syncErrorResponse(err)) }
	if req.Group == "" {
		fail(kerr.InvalidGroupID)
		return
	}
	p, err := c.serving(req.Group)
	if err != nil {
		if errors.Is(err, kerr.CoordinatorLoadInProgress) {
			// The rebalance's state was lost with the previous
			// coordinator: the member must rejoin, which it does
			// without looking for the coordinator again. Older
			// clients do not expect LOAD_IN_PROGRESS here.
			err = kerr.RebalanceInProgress
		}
		fail(err)
		return
	}
	g := p.groups[req.Group]
	if g == nil {
		fail(kerr.UnknownMemberID)
		return
	}
	if err := validateSync(g, req); err != nil {
		fail(err)
		return
	}
	m := g.byID[req.MemberID]
	switch g.state {
	case stateEmpty:
		fail(kerr.UnknownMemberID)
	case statePreparingRebalance:
		fail(kerr.RebalanceInProgress)
	case stateCompletingRebalance:
		c.answerSyncError(m, kerr.RebalanceInProgress) // an earlier sync it gave up on
		m.syncDone = done
		c.removePendingSync(g, m.id)
		if g.isLeader(m.id) && !(g.writingAssignment && g.writingGeneration == g.generation) {
			c.storeAssignment(g, req.GroupAssignment)
		}
	case stateStable:
		c.removePendingSync(g, m.id)
		c.scheduleSession(g, m, c.sessionCheckTimeout(m))
		done(g.syncResponse(m))
	}
}

// validateSync applies Kafka's checks, in Kafka's order.
func validateSync(g *group, req *kmsg.SyncGroupRequest) error {
	if g.is(stateDead) {
		return kerr.CoordinatorNotAvailable
	}
	if err := validateCurrentMember(g, req.MemberID, req.InstanceID); err != nil {
		return err
	}
	switch {
	case req.Generation != g.generation:
		return kerr.IllegalGeneration
	case req.ProtocolType != nil && *req.ProtocolType != g.protocolType:
		return kerr.InconsistentGroupProtocol
	case req.Protocol != nil && *req.Protocol != g.protocolName:
		return kerr.InconsistentGroupProtocol
	}
	return nil
}

// storeAssignment persists the leader's assignment with the generation,
// then hands every member its part and makes the group Stable. If the
// group moved on meanwhile (a member joined or left, it was unloaded),
// the outcome no longer matters: that move already answered the members.
func (c *Coordinator) storeAssignment(g *group, requested []kmsg.SyncGroupRequestGroupAssignment) {
	assignment := map[string][]byte{}
	for _, a := range requested {
		if g.has(a.MemberID) {
			assignment[a.MemberID] = a.MemberAssignment
		}
	}
	for _, m := range g.members {
		if _, assigned := assignment[m.id]; !assigned {
			c.logger.Warn("the leader assigned nothing to a member", "group", g.id, "member", m.id, "generation", g.generation)
			assignment[m.id] = []byte{}
		}
	}
	generation := g.generation
	g.writingAssignment, g.writingGeneration = true, generation
	c.storeGroup(g, assignment, func(err error) {
		if g.writingGeneration == generation {
			g.writingAssignment = false
		}
		if !c.live(g) || !g.is(stateCompletingRebalance) || g.generation != generation {
			return
		}
		if err != nil {
			c.resetAndPropagateAssignmentError(g, err)
			c.maybePrepareRebalance(g, "the assignment could not be persisted")
			return
		}
		for _, m := range g.members {
			m.assignment = assignment[m.id]
		}
		g.transition(stateStable, c.now())
		c.logger.Info("group stable", "group", g.id, "generation", g.generation)
		c.propagateAssignment(g, nil)
	})
}

// storeGroup writes the group's current generation with assignment, and
// calls done with the outcome, translated for the members (a timeout is
// REBALANCE_IN_PROGRESS: they rejoin and the next generation tries again).
func (c *Coordinator) storeGroup(g *group, assignment map[string][]byte, done func(err error)) {
	answered := false
	finish := func(err error) {
		if !answered {
			answered = true
			done(storeError(err))
		}
	}
	record := groupRecord(g, assignment)
	c.write(g.partition, []batch.Record{record}, finish, func() { finish(kerr.RequestTimedOut) })
}

// resetAndPropagateAssignmentError clears the generation's assignments and
// tells every member waiting in SyncGroup why it gets none.
func (c *Coordinator) resetAndPropagateAssignmentError(g *group, err error) {
	if !g.is(stateCompletingRebalance) {
		panic("group: resetting assignments of " + g.id + " in state " + g.state.String())
	}
	for _, m := range g.members {
		m.assignment = nil
	}
	c.propagateAssignment(g, err)
}

// propagateAssignment answers every parked SyncGroup: with the member's
// assignment, or with err. Each answered member's session restarts: its
// expiry was ignored while it waited.
func (c *Coordinator) propagateAssignment(g *group, err error) {
	for _, m := range g.members {
		if m.syncDone == nil {
			continue
		}
		done := m.syncDone
		m.syncDone = nil
		c.scheduleSession(g, m, c.sessionCheckTimeout(m))
		if err != nil {
			done(syncErrorResponse(err))
			continue
		}
		done(g.syncResponse(m))
	}
}

// syncResponse is a successful SyncGroup answer: the member's assignment.
func (g *group) syncResponse(m *member) *kmsg.SyncGroupResponse {
	resp := kmsg.NewPtrSyncGroupResponse()
	resp.ProtocolType = cloneString(&g.protocolType)
	resp.Protocol = cloneString(&g.protocolName)
	resp.MemberAssignment = m.assignment
	return resp
}

func syncErrorResponse(err error) *kmsg.SyncGroupResponse {
	resp := kmsg.NewPtrSyncGroupResponse()
	resp.ErrorCode = kafkaCode(err)
	return resp
}

// answerSyncError answers m's parked SyncGroup, if any, with err.
func (c *Coordinator) answerSyncError(m *member, err error) {
	if m.syncDone == nil {
		return
	}
	done := m.syncDone
	m.syncDone = nil
	done(syncErrorResponse(err))
}
