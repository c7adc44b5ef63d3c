package controller

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
	"sluice/core/wire"
)

// BrokerHeartbeat answers BrokerHeartbeat (KIP-631), which every broker
// sends every broker.heartbeat.interval.ms with its broker epoch and the
// metadata offset it has applied. The heartbeat renews the broker's
// session (liveness.go), then, in the broker's state:
//
//   - controlled shutdown (WantShutdown, sticky until it registers again):
//     its leaderships move away and it leaves every ISR (elections.go);
//     once it leads nothing and has applied the records that said so, and
//     every other that took a leadership or replica from it, it is fenced
//     and told ShouldShutdown;
//   - unfenced, caught up, and still named a deposed leader somewhere
//     (metadata.Partition.Deposed): a BrokerCaughtUpRecord says it serves
//     none of those partitions any more, so their new leaders stop
//     waiting for it (core/replica, takeover.go);
//   - WantFence on an unfenced broker: fenced, as if its session expired;
//   - fenced, and caught up (its metadata offset has reached its
//     registration record, its fencing and every change that took a
//     leadership from it; catch_up.go): unfenced, and leaderless
//     partitions it can lead get it as leader. A broker stays fenced
//     until then, so it never leads from metadata older than its own
//     registration, and never regains its controller lease while its
//     image still names it the leader of partitions moved away from it.
//
// The answer reports IsCaughtUp, IsFenced and ShouldShutdown as they stand
// once the records it proposed are committed. An unfenced answer renews
// the broker's read lease (core/broker lifecycle.go), which assumes it
// comes from the controller that would fence the broker: one deposed
// without knowing it (paused, cut off) must not give it. So an answer
// that commits nothing goes at once only while this controller's
// leadership lease holds (a proposal of its committed recently:
// holdsLeadershipLease), and otherwise after a no-op commits (cluster
// seed 4457724: a paused controller node, resumed, renewed its own
// broker's lease and that broker served committed offsets its successor
// had moved past). A broker not registered at
// this epoch gets STALE_BROKER_EPOCH (it registers again); a controller
// that is not the active one, NOT_CONTROLLER.
func (c *Controller) BrokerHeartbeat(req *kmsg.BrokerHeartbeatRequest, done wire.Responder) {
	c.submitOperation(operation{request: &heartbeat{c: c, request: req, done: done}, leased: true})
}

// heartbeat is one BrokerHeartbeat being handled: its request, what its
// plan found, and its answer, in one allocation (a submittedRequest)
// rather than a closure for each step.
type heartbeat struct {
	c       *Controller
	request *kmsg.BrokerHeartbeatRequest
	done    wire.Responder

	// refused is the plan's refusal, which the answer carries whatever
	// the outcome (no records were proposed).
	refused *failure
	// caughtUp is what the plan found the broker's metadata offset to
	// be; then what the outcome, once known, does besides answering.
	caughtUp bool
	then     heartbeatThen
	// session and broker are the broker's, as the plan found them.
	session *session
	broker  *metadata.Broker
	// leaderships is how many leaderships an unfencing gave the broker.
	leaderships int

	response kmsg.BrokerHeartbeatResponse
}

// heartbeatThen is what a heartbeat's outcome does besides answering.
type heartbeatThen int

const (
	heartbeatAnswers heartbeatThen = iota
	// heartbeatUnfences: the broker was unfenced (logged).
	heartbeatUnfences
	// heartbeatMovesLeaderships: a shutting-down broker's leaderships
	// were moved away (the offset it must reach is noted).
	heartbeatMovesLeaderships
	// heartbeatEndsShutdown: a shutting-down broker was fenced and is
	// told to shut down.
	heartbeatEndsShutdown
	// heartbeatShutDown: a shutting-down broker, fenced already, is
	// told to shut down.
	heartbeatShutDown
)

// plan renews the broker's session and decides what its heartbeat
// changes.
func (h *heartbeat) plan() []metadata.Record {
	c, req := h.c, h.request
	broker, refused := c.registeredAt(req.BrokerID, req.BrokerEpoch)
	if refused != nil {
		h.refused = refused
		return nil
	}
	s := c.renewSession(req.BrokerID, broker.Epoch, true)
	s.metadataOffset = req.CurrentMetadataOffset
	h.session, h.broker = s, broker
	h.caughtUp = req.CurrentMetadataOffset >= c.catchUpOffsets[req.BrokerID]
	if req.WantShutdown && !s.shuttingDown {
		c.log.Info("broker asked for a controlled shutdown", "broker", req.BrokerID)
		s.shuttingDown = true
	}
	switch {
	case s.shuttingDown:
		return c.planControlledShutdown(h)
	case req.WantFence && !broker.Fenced:
		return append([]metadata.Record{fenceRecord(req.BrokerID, broker.Epoch, true)}, c.removeFromPartitions(req.BrokerID)...)
	case !req.WantFence && broker.Fenced && h.caughtUp:
		records := append([]metadata.Record{fenceRecord(req.BrokerID, broker.Epoch, false)}, c.electLeaderless(req.BrokerID)...)
		h.then, h.leaderships = heartbeatUnfences, len(records)-1
		return records
	case !broker.Fenced && (h.caughtUp || c.w.Canaries.On(CanaryCaughtUpBeforeCaughtUp)) && c.image.Deposes(req.BrokerID):
		// It has applied what deposed it: the new leaders need not
		// wait for it (metadata.Partition.Deposed).
		return []metadata.Record{{BrokerCaughtUp: &metadata.BrokerCaughtUpRecord{BrokerID: req.BrokerID, BrokerEpoch: broker.Epoch}}}
	}
	return nil
}

// planControlledShutdown moves a shutting-down broker's leaderships away;
// once it has none left and has applied the records that moved them, it
// is fenced and may stop.
func (c *Controller) planControlledShutdown(h *heartbeat) []metadata.Record {
	id, s, broker := h.request.BrokerID, h.session, h.broker
	if broker.Fenced {
		h.then = heartbeatShutDown
		return nil
	}
	if moves := c.removeFromPartitions(id); len(moves) > 0 {
		h.then = heartbeatMovesLeaderships
		return moves
	}
	// Fenced, it no longer counts as a former leader anywhere
	// (metadata.Partition.Deposed), so it must first have applied every
	// record that took a leadership from it, not only the moves made
	// for the shutdown: one deposed earlier may still serve on its lease.
	if s.metadataOffset < s.shutdownOffset || !h.caughtUp {
		return nil
	}
	h.then = heartbeatEndsShutdown
	return []metadata.Record{fenceRecord(id, broker.Epoch, true)}
}

// answer carries out what the outcome does and answers: IsCaughtUp,
// IsFenced and ShouldShutdown as they stand now.
func (h *heartbeat) answer(outcome *failure) {
	if h.refused != nil {
		h.respond(h.refused, false, false)
		return
	}
	shouldShutDown := false
	switch h.then {
	case heartbeatUnfences:
		if outcome == nil {
			h.c.log.Info("broker unfenced", "broker", h.request.BrokerID, "epoch", h.broker.Epoch, "leaderships", h.leaderships)
		}
	case heartbeatMovesLeaderships:
		if outcome == nil {
			h.session.shutdownOffset = h.c.image.Offset
		}
	case heartbeatEndsShutdown:
		if outcome == nil {
			h.c.log.Info("controlled shutdown complete", "broker", h.request.BrokerID)
		}
		shouldShutDown = outcome == nil
	case heartbeatShutDown:
		shouldShutDown = true
	}
	h.respond(outcome, h.caughtUp, shouldShutDown)
}

// refuse answers a heartbeat that never got its turn.
func (h *heartbeat) refuse(f *failure) { h.respond(f, false, false) }

func (h *heartbeat) respond(f *failure, caughtUp, shouldShutDown bool) {
	resp := &h.response // as the request's ResponseKind makes it
	*resp = kmsg.NewBrokerHeartbeatResponse()
	resp.Version = h.request.Version
	resp.ErrorCode = f.errorCode()
	resp.IsFenced = true
	if f == nil {
		resp.IsCaughtUp, resp.ShouldShutdown = caughtUp, shouldShutDown
		if broker, registered := h.c.image.Brokers[h.request.BrokerID]; registered && broker.Epoch == h.request.BrokerEpoch {
			resp.IsFenced = broker.Fenced
		}
	}
	h.done.Respond(resp)
}
