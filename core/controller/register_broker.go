package controller

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

// RegisterBroker answers BrokerRegistration (KIP-631): a broker process
// announces itself at start with a fresh incarnation id, and gets a new
// broker epoch. Requests a broker makes carry its epoch, and anything an
// older process of the same broker left behind carries an older one, which
// the controller refuses (STALE_BROKER_EPOCH).
//
// The epoch is max(previous epoch of this broker + 1, last committed
// metadata offset + 1), and at least 1. Kafka uses the offset of the
// registration record itself, which the controller cannot know before the
// quorum appends it; "committed offset + 1" is that offset whenever the
// controller is the only writer with nothing else pending, which holds for
// the single-node quorum, and in any case keeps epochs strictly increasing
// for each broker and across the cluster in log order. Epoch 0 is never
// given: brokers read it as "not registered yet".
//
// A re-registration always wins. Kafka refuses one with a different
// incarnation id while the old incarnation's heartbeat session is alive
// (DUPLICATE_BROKER_REGISTRATION); without heartbeats yet, a registering
// process is always the newest one.
//
// The cluster id in the request is not checked: it lives in each node's
// meta.properties, not in the metadata log.
func (c *Controller) RegisterBroker(req *kmsg.BrokerRegistrationRequest, done func(*kmsg.BrokerRegistrationResponse)) {
	answer := func(epoch int64, f *failure) {
		resp := req.ResponseKind().(*kmsg.BrokerRegistrationResponse)
		resp.BrokerEpoch = epoch
		resp.ErrorCode = f.errorCode()
		if f != nil {
			c.log.Warn("broker registration refused", "broker", req.BrokerID, "error", f.code, "reason", f.message)
		}
		done(resp)
	}
	c.submit(func() ([]metadata.Record, func(*failure)) {
		if f := checkRegistration(req); f != nil {
			return nil, func(*failure) { answer(-1, f) }
		}
		epoch := c.nextBrokerEpoch(req.BrokerID)
		listener := req.Listeners[0]
		register := &metadata.RegisterBrokerRecord{
			BrokerID:      req.BrokerID,
			IncarnationID: req.IncarnationID,
			BrokerEpoch:   epoch,
			Host:          listener.Host,
			Port:          int32(listener.Port),
		}
		if req.Rack != nil {
			register.Rack = *req.Rack
		}
		records := []metadata.Record{{RegisterBroker: register}}
		records = append(records, c.fencingAtRegistration(req.BrokerID, epoch)...)
		return records, func(f *failure) {
			if f != nil {
				answer(-1, f)
				return
			}
			c.log.Info("broker registered", "broker", req.BrokerID, "epoch", epoch, "host", register.Host, "port", register.Port)
			answer(epoch, nil)
		}
	}, func(f *failure) { answer(-1, f) })
}

// checkRegistration refuses a registration nobody could use: a negative id
// or no listener for clients to reach the broker on. The first listener is
// the one advertised.
func checkRegistration(req *kmsg.BrokerRegistrationRequest) *failure {
	switch {
	case req.BrokerID < 0:
		return fail(kerr.InvalidRequest, "broker id %d is negative", req.BrokerID)
	case len(req.Listeners) == 0:
		return fail(kerr.InvalidRequest, "broker %d registered without a listener", req.BrokerID)
	case req.Listeners[0].Host == "" || req.Listeners[0].Port == 0:
		return fail(kerr.InvalidRequest, "broker %d's listener %q has no host or port", req.BrokerID, req.Listeners[0].Name)
	}
	return nil
}

// nextBrokerEpoch is the epoch a new registration of broker id gets (see
// RegisterBroker).
func (c *Controller) nextBrokerEpoch(id int32) int64 {
	epoch := max(c.image.Offset+1, 1)
	if previous, registered := c.image.Brokers[id]; registered {
		epoch = max(epoch, previous.Epoch+1)
	}
	return epoch
}

// fencingAtRegistration is what follows a registration record. On a single
// node the broker is unfenced at once: it is the whole cluster, and its
// metadata is the controller's own. In a cluster a broker will stay fenced
// until its heartbeats show it has caught up with the metadata log
// (KIP-631); then this returns nothing and BrokerHeartbeat unfences.
func (c *Controller) fencingAtRegistration(id int32, epoch int64) []metadata.Record {
	return []metadata.Record{{BrokerFence: &metadata.BrokerFenceRecord{BrokerID: id, BrokerEpoch: epoch, Fenced: false}}}
}
