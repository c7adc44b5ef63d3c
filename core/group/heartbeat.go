package group

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
)

// Heartbeat handles a Heartbeat request (versions 0-4): it keeps a
// member's session alive and tells it, with REBALANCE_IN_PROGRESS, when
// it must rejoin.
func (c *Coordinator) Heartbeat(req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	resp.ErrorCode = kafkaCode(c.heartbeat(req))
	return resp
}

func (c *Coordinator) heartbeat(req *kmsg.HeartbeatRequest) error {
	if req.Group == "" {
		return kerr.InvalidGroupID
	}
	p, err := c.serving(req.Group)
	switch {
	case errors.Is(err, kerr.CoordinatorLoadInProgress):
		// The group is being loaded: answer blindly, as Kafka does;
		// the member learns the truth at its next heartbeat.
		return nil
	case err != nil:
		return err
	}
	g := p.groups[req.Group]
	if g == nil {
		return kerr.UnknownMemberID
	}
	if g.is(stateDead) {
		return kerr.CoordinatorNotAvailable
	}
	if err := validateCurrentMember(g, req.MemberID, req.InstanceID); err != nil {
		return err
	}
	if req.Generation != g.generation {
		return kerr.IllegalGeneration
	}
	m := g.byID[req.MemberID]
	switch g.state {
	case stateEmpty:
		return kerr.UnknownMemberID
	case statePreparingRebalance:
		c.scheduleSession(g, m, c.sessionCheckTimeout(m))
		return kerr.RebalanceInProgress
	default:
		// Stable, or CompletingRebalance: a member may heartbeat as
		// soon as it has its join answer.
		c.scheduleSession(g, m, c.sessionCheckTimeout(m))
		return nil
	}
}

// sessionCheckTimeout is how long m's session timer waits before judging
// it gone: its session.timeout.ms, or under BUGGIFY a fraction of it, so
// members expire and groups rebalance far more often. That is legal:
// to the client it is the same as its heartbeats being delayed in the
// network past its session, which Kafka clients must survive (they rejoin
// on UNKNOWN_MEMBER_ID); nothing the group has committed is touched.
// Production (a nil Buggify) always waits the whole session.
func (c *Coordinator) sessionCheckTimeout(m *member) time.Duration {
	timeout := m.sessionTimeout()
	if c.w.Buggify.Hit(core.BuggifyGroupSessionShort) {
		timeout /= sessionBuggifyDivisor
	}
	return timeout
}

// scheduleSession (re)starts m's expiry timer: unless something
// reschedules it first, m is removed after timeout.
func (c *Coordinator) scheduleSession(g *group, m *member, timeout time.Duration) {
	m.stopSessionTimer() // so the timer that fires is the latest one
	if m.sessionExpiry == nil {
		m.sessionExpiry = func() { c.sessionExpired(m) }
	}
	m.sessionGroup = g
	m.sessionTimer = c.w.Clock.AfterFunc(timeout, m.sessionExpiry)
}

// sessionExpired removes m when its session timer fires.
func (c *Coordinator) sessionExpired(m *member) {
	g := m.sessionGroup
	m.sessionTimer = nil
	if !c.live(g) || g.byID[m.id] != m {
		return
	}
	if !m.isNew && (m.awaitingJoin() || m.syncDone != nil) {
		// A member waiting in JoinGroup or SyncGroup cannot
		// heartbeat; its session restarts when it is answered.
		return
	}
	c.removeMemberAndUpdateGroup(g, m, "session timeout expired")
}
