package controller

import (
	"slices"
	"time"

	"sluice/core"
	"sluice/core/metadata"
)

// Broker liveness, as KRaft's BrokerHeartbeatManager keeps it: each
// registered broker has a session that its heartbeats renew. A session
// not renewed for SessionTimeout (broker.session.timeout.ms) expires, and
// the controller then fences the broker: a BrokerFenceRecord, the broker
// taken out of every ISR, and new leaders for the partitions it led
// (elections.go). Sessions live in the active controller's memory only;
// a controller that becomes active gives every registered broker a fresh
// one, so a failover never fences a broker that had no chance to reach
// the new controller.

// session is one broker's heartbeat session with the active controller.
type session struct {
	// epoch is the broker epoch the session belongs to; a new
	// registration starts a new session.
	epoch int64
	// deadline is when the session expires, on the controller's
	// monotonic clock (Clock.Elapsed).
	deadline time.Duration
	timer    core.Timer
	// heardFrom is set once the broker itself (a registration or a
	// heartbeat) reached this controller in its current term, as opposed
	// to a session handed out at activation. Only a session heard from
	// stops another incarnation from registering.
	heardFrom bool
	// metadataOffset is the last metadata offset the broker reported.
	metadataOffset int64
	// shuttingDown is set from the first heartbeat asking for a
	// controlled shutdown until the broker registers again. Such a
	// broker may neither lead nor join an ISR.
	shuttingDown bool
	// shutdownOffset is the metadata offset the broker must reach
	// before it may stop: the last record that moved its leaderships.
	shutdownOffset int64
	// term is the controller term of the last renewal, which armed
	// timer; expire is timer's function, made once per session rather
	// than per heartbeat.
	term   uint64
	expire func()
}

// newSession starts broker id's session at epoch.
func (c *Controller) newSession(id int32, epoch int64) *session {
	s := &session{epoch: epoch, metadataOffset: -1}
	// Every renewal stops the timer before arming the next and sets
	// term first, so the timer that fires reads its own renewal's term.
	s.expire = func() { c.sessionExpired(id, epoch, s.term) }
	return s
}

// startSessions gives every registered broker a fresh session; called when
// the controller becomes ready.
func (c *Controller) startSessions() {
	c.dropSessions()
	for _, id := range c.image.BrokerIDs() {
		c.renewSession(id, c.image.Brokers[id].Epoch, false)
	}
}

// dropSessions stops every session timer and forgets the sessions.
func (c *Controller) dropSessions() {
	for _, id := range c.sessionIDs() {
		if s := c.sessions[id]; s.timer != nil {
			s.timer.Stop()
		}
	}
	c.sessions = map[int32]*session{}
}

// sessionIDs lists the brokers with a session, sorted.
func (c *Controller) sessionIDs() []int32 {
	ids := make([]int32, 0, len(c.sessions))
	for id := range c.sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// renewSession extends broker id's session at epoch by SessionTimeout from
// now, starting a new one if the epoch is new. heard says the broker
// itself reached this controller.
func (c *Controller) renewSession(id int32, epoch int64, heard bool) *session {
	s := c.sessions[id]
	if s == nil || s.epoch != epoch {
		if s != nil && s.timer != nil {
			s.timer.Stop()
		}
		s = c.newSession(id, epoch)
		c.sessions[id] = s
	}
	s.heardFrom = s.heardFrom || heard
	s.deadline = c.w.Clock.Elapsed() + c.config.SessionTimeout
	if s.timer != nil {
		s.timer.Stop()
	}
	s.term = c.term
	s.timer = c.w.Clock.AfterFunc(c.config.SessionTimeout, s.expire)
	return s
}

// hasLiveSession reports whether broker id's current incarnation has
// heartbeated to this controller within its session timeout.
func (c *Controller) hasLiveSession(id int32) bool {
	s := c.sessions[id]
	return s != nil && s.heardFrom && c.w.Clock.Elapsed() < s.deadline
}

// isShuttingDown reports a broker in controlled shutdown.
func (c *Controller) isShuttingDown(id int32) bool {
	s := c.sessions[id]
	return s != nil && s.shuttingDown
}

// sessionExpired fences the broker whose session timer fired, unless a
// heartbeat renewed it meanwhile or the controller is no longer the one
// that armed the timer.
func (c *Controller) sessionExpired(id int32, epoch int64, term uint64) {
	if c.term != term || !c.active {
		return
	}
	s := c.sessions[id]
	if s == nil || s.epoch != epoch || c.w.Clock.Elapsed() < s.deadline {
		return
	}
	broker, registered := c.image.Brokers[id]
	if !registered || broker.Epoch != epoch || broker.Fenced {
		return
	}
	c.log.Warn("broker session expired; fencing it", "broker", id, "epoch", epoch, "timeout", c.config.SessionTimeout)
	c.submit(func() ([]metadata.Record, func(*failure)) {
		// Judge again at the operation's turn: a heartbeat queued
		// ahead of it may have renewed the session.
		s := c.sessions[id]
		broker, registered := c.image.Brokers[id]
		if s == nil || s.epoch != epoch || c.w.Clock.Elapsed() < s.deadline || !registered || broker.Epoch != epoch || broker.Fenced {
			return nil, func(*failure) {}
		}
		records := append([]metadata.Record{fenceRecord(id, epoch, true)}, c.removeFromPartitions(id)...)
		return records, func(f *failure) {
			if f != nil {
				c.log.Warn("fencing a broker failed; trying again", "broker", id, "error", f.message)
				c.retryExpiry(id, epoch, term)
				return
			}
			c.log.Info("broker fenced", "broker", id, "epoch", epoch)
		}
	}, func(f *failure) {
		if f.code != notController().code {
			c.retryExpiry(id, epoch, term)
		}
	})
}

// retryExpiry tries the fencing again shortly (a full queue, a failed
// proposal).
func (c *Controller) retryExpiry(id int32, epoch int64, term uint64) {
	c.w.Clock.AfterFunc(activationRetryDelay, func() { c.sessionExpired(id, epoch, term) })
}

// fenceRecord fences or unfences broker id at epoch.
func fenceRecord(id int32, epoch int64, fenced bool) metadata.Record {
	return metadata.Record{BrokerFence: &metadata.BrokerFenceRecord{BrokerID: id, BrokerEpoch: epoch, Fenced: fenced}}
}
