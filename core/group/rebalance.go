package group

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maybePrepareRebalance starts a rebalance unless one is under way.
func (c *Coordinator) maybePrepareRebalance(g *group, reason string) {
	if g.canRebalance() {
		c.prepareRebalance(g, reason)
	}
}

// prepareRebalance moves the group to PreparingRebalance: members waiting
// for an assignment are told to rejoin instead, and the rebalance waits
// for every member to rejoin — for at most the rebalance timeout, or, for
// a group that was empty, for the initial rebalance delay.
func (c *Coordinator) prepareRebalance(g *group, reason string) {
	if g.is(stateCompletingRebalance) {
		c.resetAndPropagateAssignmentError(g, kerr.RebalanceInProgress)
	}
	c.stopSyncTimer(g)
	clear(g.pendingSync)
	wasEmpty := g.is(stateEmpty)
	g.transition(statePreparingRebalance, c.now())
	c.logger.Info("preparing to rebalance", "group", g.id, "generation", g.generation, "reason", reason)
	if wasEmpty {
		delay := c.config.InitialRebalanceDelay
		c.scheduleJoin(g, delay, true, max(g.rebalanceTimeout()-delay, 0))
		return
	}
	c.scheduleJoin(g, g.rebalanceTimeout(), false, 0)
	c.maybeCompleteJoin(g)
}

// scheduleJoin arms the timer that ends the joining phase (Kafka's
// DelayedJoin); an initial one (InitialDelayedJoin) may instead wait
// again, up to remaining, if members keep arriving.
func (c *Coordinator) scheduleJoin(g *group, delay time.Duration, initial bool, remaining time.Duration) {
	if g.joinTimer != nil {
		g.joinTimer.Stop()
	}
	g.joinInitial = initial
	g.initialDelay = delay
	g.initialDelayRemaining = remaining
	g.joinTimer = c.w.Clock.AfterFunc(delay, func() {
		g.joinTimer = nil
		if !c.live(g) || !g.is(statePreparingRebalance) {
			return
		}
		if g.joinInitial && g.newMemberAdded && g.initialDelayRemaining > 0 {
			g.newMemberAdded = false
			next := min(c.config.InitialRebalanceDelay, g.initialDelayRemaining)
			c.scheduleJoin(g, next, true, max(g.initialDelayRemaining-g.initialDelay, 0))
			return
		}
		c.completeJoin(g)
	})
}

// maybeCompleteJoin ends the joining phase early once every member has
// rejoined — never during the initial delay, whose point is to wait.
func (c *Coordinator) maybeCompleteJoin(g *group) {
	if g.is(statePreparingRebalance) && !g.joinInitial && g.hasAllMembersJoined() {
		c.completeJoin(g)
	}
}

// completeJoin ends the joining phase (Kafka's onCompleteJoin): dynamic
// members that did not rejoin are removed (static ones stay: only their
// session timeout removes them), and the next generation starts with
// whoever is left — every member is answered, the leader with the member
// list, and each must now send SyncGroup within the rebalance timeout.
func (c *Coordinator) completeJoin(g *group) {
	if g.joinTimer != nil {
		g.joinTimer.Stop()
		g.joinTimer = nil
	}
	g.joinInitial = false
	g.newMemberAdded = false
	for _, m := range slices.Clone(g.members) {
		if !m.awaitingJoin() && !m.isStatic() {
			c.logger.Info("removing member that did not rejoin", "group", g.id, "member", m.id)
			c.answerSyncError(m, kerr.UnknownMemberID)
			g.remove(m.id)
		}
	}
	if !g.maybeElectNewJoinedLeader() && len(g.members) > 0 {
		// Only static members that have not rejoined are left: wait
		// another rebalance timeout for them (or for their sessions
		// to expire).
		c.logger.Warn("no member rejoined; waiting longer", "group", g.id)
		c.scheduleJoin(g, g.rebalanceTimeout(), false, 0)
		return
	}
	g.initNextGeneration(c.now())
	if g.is(stateEmpty) {
		c.logger.Info("group is empty", "group", g.id, "generation", g.generation)
		c.storeGroup(g, nil, func(err error) {
			if err != nil {
				// Safe to only warn, as Kafka does: the previous
				// generation it leaves in the log has no live
				// member to act on it.
				c.logger.Warn("cannot persist the empty group", "group", g.id, "error", err)
			}
		})
		return
	}
	c.logger.Info("group stabilizing", "group", g.id, "generation", g.generation,
		"protocol", g.protocolName, "leader", g.leaderID, "members", len(g.members))
	members := g.currentMemberMetadata()
	for _, m := range g.members {
		g.pendingSync[m.id] = true
	}
	c.schedulePendingSync(g)
	for _, m := range slices.Clone(g.members) {
		var list []kmsg.JoinGroupResponseMember
		if g.isLeader(m.id) {
			list = members
		}
		m.isNew = false
		if m.awaitingJoin() {
			c.answerJoin(g, m, g.joinResponse(m, list, g.leaderID))
		} else {
			c.scheduleSession(g, m, c.sessionCheckTimeout(m))
		}
	}
}

// schedulePendingSync gives the generation's members the rebalance
// timeout to send SyncGroup; those that do not are removed and the group
// rebalances again.
func (c *Coordinator) schedulePendingSync(g *group) {
	c.stopSyncTimer(g)
	generation := g.generation
	g.syncTimer = c.w.Clock.AfterFunc(g.rebalanceTimeout(), func() {
		g.syncTimer = nil
		if !c.live(g) || g.generation != generation || len(g.pendingSync) == 0 {
			return
		}
		if !g.is(stateCompletingRebalance) && !g.is(stateStable) {
			return
		}
		late := sortedKeys(g.pendingSync)
		for _, id := range late {
			if m := g.byID[id]; m != nil {
				c.answerJoinError(g, m, "", kerr.UnknownMemberID)
				c.answerSyncError(m, kerr.UnknownMemberID)
			}
			g.remove(id)
		}
		c.logger.Info("removed members that did not sync in time", "group", g.id, "members", late)
		c.prepareRebalance(g, "members did not send SyncGroup in time")
	})
}

// removePendingSync notes that a member sent SyncGroup; when none is
// left, the sync deadline is moot.
func (c *Coordinator) removePendingSync(g *group, memberID string) {
	delete(g.pendingSync, memberID)
	if len(g.pendingSync) == 0 {
		c.stopSyncTimer(g)
	}
}

func (c *Coordinator) stopSyncTimer(g *group) {
	if g.syncTimer != nil {
		g.syncTimer.Stop()
		g.syncTimer = nil
	}
}

// removeMemberAndUpdateGroup removes a member that left or failed, and
// lets the group react: a stable or assigning group rebalances; a
// rebalance under way may now be complete.
func (c *Coordinator) removeMemberAndUpdateGroup(g *group, m *member, reason string) {
	c.logger.Info("removing member", "group", g.id, "member", m.id, "reason", reason)
	// A new member may be removed with its join still parked: it hears
	// UNKNOWN_MEMBER_ID and, if it is still alive, joins again.
	c.answerJoinError(g, m, "", kerr.UnknownMemberID)
	c.answerSyncError(m, kerr.UnknownMemberID)
	g.remove(m.id)
	switch g.state {
	case stateStable, stateCompletingRebalance:
		c.maybePrepareRebalance(g, reason)
	case statePreparingRebalance:
		c.maybeCompleteJoin(g)
	}
}
