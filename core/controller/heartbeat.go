package controller

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

// BrokerHeartbeat answers BrokerHeartbeat (KIP-631), which every broker
// sends every broker.heartbeat.interval.ms with its broker epoch and the
// metadata offset it has applied. The heartbeat renews the broker's
// session (liveness.go), then, in the broker's state:
//
//   - controlled shutdown (WantShutdown, sticky until it registers again):
//     its leaderships move away and it leaves every ISR (elections.go);
//     once it leads nothing and has applied the records that said so, it
//     is fenced and told ShouldShutdown;
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
// once the records it proposed are committed. A broker not registered at
// this epoch gets STALE_BROKER_EPOCH (it registers again); a controller
// that is not the active one, NOT_CONTROLLER.
func (c *Controller) BrokerHeartbeat(req *kmsg.BrokerHeartbeatRequest, done func(*kmsg.BrokerHeartbeatResponse)) {
	answer := func(f *failure, caughtUp, shouldShutDown bool) {
		resp := req.ResponseKind().(*kmsg.BrokerHeartbeatResponse)
		resp.ErrorCode = f.errorCode()
		resp.IsFenced = true
		if f == nil {
			resp.IsCaughtUp, resp.ShouldShutdown = caughtUp, shouldShutDown
			if broker, registered := c.image.Brokers[req.BrokerID]; registered && broker.Epoch == req.BrokerEpoch {
				resp.IsFenced = broker.Fenced
			}
		}
		done(resp)
	}
	c.submit(func() ([]metadata.Record, func(*failure)) {
		broker, registered := c.image.Brokers[req.BrokerID]
		switch {
		case !registered:
			f := fail(kerr.StaleBrokerEpoch, "no broker registration found for broker %d", req.BrokerID)
			return nil, func(*failure) { answer(f, false, false) }
		case broker.Epoch != req.BrokerEpoch:
			f := fail(kerr.StaleBrokerEpoch, "broker %d is at epoch %d, not %d", req.BrokerID, broker.Epoch, req.BrokerEpoch)
			return nil, func(*failure) { answer(f, false, false) }
		}
		s := c.renewSession(req.BrokerID, broker.Epoch, true)
		s.metadataOffset = req.CurrentMetadataOffset
		caughtUp := req.CurrentMetadataOffset >= c.catchUpOffsets[req.BrokerID]
		if req.WantShutdown && !s.shuttingDown {
			c.log.Info("broker asked for a controlled shutdown", "broker", req.BrokerID)
			s.shuttingDown = true
		}
		switch {
		case s.shuttingDown:
			return c.planControlledShutdown(req.BrokerID, s, broker, caughtUp, answer)
		case req.WantFence && !broker.Fenced:
			records := append([]metadata.Record{fenceRecord(req.BrokerID, broker.Epoch, true)}, c.removeFromPartitions(req.BrokerID)...)
			return records, func(f *failure) { answer(f, caughtUp, false) }
		case !req.WantFence && broker.Fenced && caughtUp:
			records := append([]metadata.Record{fenceRecord(req.BrokerID, broker.Epoch, false)}, c.electLeaderless(req.BrokerID)...)
			return records, func(f *failure) {
				if f == nil {
					c.log.Info("broker unfenced", "broker", req.BrokerID, "epoch", broker.Epoch, "leaderships", len(records)-1)
				}
				answer(f, caughtUp, false)
			}
		}
		return nil, func(f *failure) { answer(f, caughtUp, false) }
	}, func(f *failure) { answer(f, false, false) })
}

// planControlledShutdown moves a shutting-down broker's leaderships away;
// once it has none left and has applied the records that moved them, it
// is fenced and may stop.
func (c *Controller) planControlledShutdown(id int32, s *session, broker *metadata.Broker, caughtUp bool,
	answer func(f *failure, caughtUp, shouldShutDown bool)) ([]metadata.Record, func(*failure)) {
	if broker.Fenced {
		return nil, func(f *failure) { answer(f, caughtUp, true) }
	}
	if moves := c.removeFromPartitions(id); len(moves) > 0 {
		return moves, func(f *failure) {
			if f == nil {
				s.shutdownOffset = c.image.Offset
			}
			answer(f, caughtUp, false)
		}
	}
	if s.metadataOffset < s.shutdownOffset {
		return nil, func(f *failure) { answer(f, caughtUp, false) }
	}
	return []metadata.Record{fenceRecord(id, broker.Epoch, true)}, func(f *failure) {
		if f == nil {
			c.log.Info("controlled shutdown complete", "broker", id)
		}
		answer(f, caughtUp, f == nil)
	}
}
