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
// active controller is the only writer with nothing else pending, which
// holds once it is ready (activation.go) since operations run one at a
// time, and in any case keeps epochs strictly increasing for each broker
// and across the cluster in log order. Epoch 0 is never given: brokers read
// it as "not registered yet".
//
// A registered broker is fenced (the image's rule for a registration
// record) until its heartbeats show it has applied the metadata log up to
// its own registration (heartbeat.go). A new incarnation of a broker that
// was unfenced therefore loses its leaderships and ISR memberships in the
// same proposal, as a fenced broker does (elections.go): the old process
// is gone, and the new one may have lost whatever its disk had not synced.
//
// The same incarnation registering again (its first answer was lost) gets
// its current epoch back and changes nothing. Another incarnation is
// refused with DUPLICATE_BROKER_REGISTRATION while the current one's
// session is alive, as in Kafka: two live processes claiming one broker id
// is a misconfiguration. Only a session renewed by the broker itself
// counts, not the fresh one every broker gets when a controller activates,
// or a node restarting with its own controller could not register.
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
		if existing, registered := c.image.Brokers[req.BrokerID]; registered {
			if existing.IncarnationID == req.IncarnationID {
				epoch := existing.Epoch
				c.renewSession(req.BrokerID, epoch, true)
				return nil, func(f *failure) { answer(epoch, f) }
			}
			if c.hasLiveSession(req.BrokerID) {
				f := fail(kerr.DuplicateBrokerRegistration, "another incarnation of broker %d is alive (epoch %d); try again once its session of %v has expired",
					req.BrokerID, existing.Epoch, c.config.SessionTimeout)
				return nil, func(*failure) { answer(-1, f) }
			}
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
		records = append(records, c.removeFromPartitions(req.BrokerID)...)
		return records, func(f *failure) {
			if f != nil {
				answer(-1, f)
				return
			}
			c.renewSession(req.BrokerID, epoch, true)
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

// registeredAt returns broker id's registration if the broker is
// registered at epoch; otherwise STALE_BROKER_EPOCH, which tells the
// broker to register again. Every request a broker sends on its own
// behalf (heartbeats, AlterPartition, producer id blocks) passes this.
func (c *Controller) registeredAt(id int32, epoch int64) (*metadata.Broker, *failure) {
	broker, registered := c.image.Brokers[id]
	switch {
	case !registered:
		return nil, fail(kerr.StaleBrokerEpoch, "no broker registration found for broker %d", id)
	case broker.Epoch != epoch:
		return nil, fail(kerr.StaleBrokerEpoch, "broker %d is at epoch %d, not %d", id, broker.Epoch, epoch)
	}
	return broker, nil
}
