package controller

import (
	"time"

	"sluice/core/metadata"
)

// The active/inactive switch. Every controller node follows the committed
// metadata log, but only the quorum leader's controller acts: it alone
// validates requests, proposes records, keeps broker sessions and fences
// brokers. The node calls Activate when its quorum becomes leader and
// Deactivate when it stops being leader (quorum.OnLeaderChange).
//
// A new leader may hold records of earlier terms that are not yet
// committed, and so not yet in the image: validating a request against
// that image could, say, create a topic an uncommitted record already
// creates, and the two records would then fail to apply on every node.
// So activation first commits a barrier: a record of the new term, which
// Raft commits only together with everything before it (Raft §5.4.2). Once
// it is committed and applied, the image holds every earlier record, and
// the controller is ready: it gives every registered broker a fresh
// session (none of them has had a chance to heartbeat to it yet) and only
// then serves the operations queued behind the barrier.

// activationRetryDelay is the pause before proposing the barrier again
// after a failed attempt (a quorum still settling).
const activationRetryDelay = 100 * time.Millisecond

// Activate makes this controller the active one, as the quorum leader of
// epoch. It does nothing when already active.
func (c *Controller) Activate(epoch int32) {
	if c.active {
		return
	}
	c.active, c.ready = true, false
	c.term++
	c.log.Info("controller activating", "epoch", epoch, "metadata_offset", c.image.Offset)
	c.proposeBarrier(c.term)
}

// Deactivate makes this controller inactive: its sessions and their timers
// are dropped, queued operations are answered NOT_CONTROLLER when their
// turn comes, and new ones at once. An operation whose records are already
// proposed gets whatever the quorum answers.
func (c *Controller) Deactivate() {
	if !c.active {
		return
	}
	c.active, c.ready = false, false
	c.term++
	c.dropSessions()
	c.log.Info("controller inactive")
}

// IsActive reports whether this controller is the active one and ready to
// act.
func (c *Controller) IsActive() bool { return c.active && c.ready }

// Close stops every timer; the controller does nothing more.
func (c *Controller) Close() { c.Deactivate() }

// proposeBarrier queues the barrier before every other operation.
func (c *Controller) proposeBarrier(term uint64) {
	c.enqueueFirst(func(finish func()) {
		if c.term != term {
			finish()
			return
		}
		barrier := metadata.Record{NoOp: &metadata.NoOpRecord{}}
		c.propose([]metadata.Record{barrier}, func(err error) {
			switch {
			case c.term != term:
				// Deactivated (or deactivated and activated again,
				// which queued a barrier of its own) meanwhile.
			case err != nil:
				c.log.Warn("controller activation barrier failed; retrying", "error", err)
				c.w.Clock.AfterFunc(activationRetryDelay, func() {
					if c.term == term {
						c.proposeBarrier(term)
					}
				})
			default:
				c.ready = true
				c.startSessions()
				c.scheduleLeaderRebalance(term)
				c.log.Info("controller active", "metadata_offset", c.image.Offset, "brokers", len(c.image.Brokers))
			}
			finish()
		})
	})
}
