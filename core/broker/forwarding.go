package broker

// Requests for the active controller. Any broker accepts the admin APIs
// (CreateTopics, DeleteTopics, CreatePartitions, AlterConfigs,
// IncrementalAlterConfigs) and sends them on to the active controller, as
// Kafka brokers forward them (KIP-590); the broker's own registration,
// heartbeats, producer id blocks and AlterPartitions go the same way. One
// code path, two transports: a local call when the active controller is
// this node's, a request to the quorum leader's controller listener
// otherwise.
//
// While no controller is known (an election is under way) or the one
// asked has just lost its leadership (NOT_CONTROLLER), the broker tries
// again with a backoff, up to ControllerRequestTimeout; then the client
// gets NOT_CONTROLLER, which every client retries. A request that may have
// reached a controller whose answer was lost (connection broken, timeout)
// is answered REQUEST_TIMED_OUT: it may have taken effect, and the client
// that retries will see (TOPIC_ALREADY_EXISTS, for one).

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/peer"
	"sluice/core/wire"
)

// Backoff of forwarded requests while no controller is known.
const (
	forwardRetryMin = 50 * time.Millisecond
	forwardRetryMax = time.Second
)

// errNoController reports that no quorum leader is known.
var errNoController = errors.New("broker: no active controller is known")

// toController sends req (its version set) to the active controller and
// calls done with the answer, or with an error when it could not be had
// within timeout (a local call has none). done runs later on the loop,
// never inside this call.
func (b *Broker) toController(req kmsg.Request, timeout time.Duration, done func(kmsg.Response, error)) {
	leader, _, known := b.quorum.Leader()
	switch {
	case !known:
		b.w.Clock.AfterFunc(0, func() { done(nil, errNoController) })
	case leader == b.config.NodeID && b.config.Roles.Controller:
		returned := false
		b.callLocalController(req, func(resp kmsg.Response) {
			if returned {
				done(resp, nil)
				return
			}
			b.w.Clock.AfterFunc(0, func() { done(resp, nil) })
		})
		returned = true
	default:
		b.controllerChannel.Request(leader, req, timeout, done)
	}
}

// callLocalController hands a request to this node's controller.
func (b *Broker) callLocalController(req kmsg.Request, done func(kmsg.Response)) {
	c := b.controller
	switch r := req.(type) {
	case *kmsg.CreateTopicsRequest:
		c.CreateTopics(r, func(resp *kmsg.CreateTopicsResponse) { done(resp) })
	case *kmsg.DeleteTopicsRequest:
		c.DeleteTopics(r, func(resp *kmsg.DeleteTopicsResponse) { done(resp) })
	case *kmsg.CreatePartitionsRequest:
		c.CreatePartitions(r, func(resp *kmsg.CreatePartitionsResponse) { done(resp) })
	case *kmsg.AlterConfigsRequest:
		c.AlterConfigs(r, func(resp *kmsg.AlterConfigsResponse) { done(resp) })
	case *kmsg.IncrementalAlterConfigsRequest:
		c.IncrementalAlterConfigs(r, func(resp *kmsg.IncrementalAlterConfigsResponse) { done(resp) })
	case *kmsg.ElectLeadersRequest:
		c.ElectLeaders(r, func(resp *kmsg.ElectLeadersResponse) { done(resp) })
	case *kmsg.AlterPartitionAssignmentsRequest:
		c.AlterPartitionReassignments(r, func(resp *kmsg.AlterPartitionAssignmentsResponse) { done(resp) })
	case *kmsg.ListPartitionReassignmentsRequest:
		c.ListPartitionReassignments(r, func(resp *kmsg.ListPartitionReassignmentsResponse) { done(resp) })
	case *kmsg.AllocateProducerIDsRequest:
		c.AllocateProducerIDs(r, func(resp *kmsg.AllocateProducerIDsResponse) { done(resp) })
	case *kmsg.BrokerRegistrationRequest:
		c.RegisterBroker(r, func(resp *kmsg.BrokerRegistrationResponse) { done(resp) })
	case *kmsg.BrokerHeartbeatRequest:
		c.BrokerHeartbeat(r, wire.ResponderFunc(done))
	case *kmsg.AlterPartitionRequest:
		c.AlterPartition(r, func(resp *kmsg.AlterPartitionResponse) { done(resp) })
	case *kmsg.DescribeQuorumRequest:
		b.quorum.HandleDescribeQuorum(r, func(resp *kmsg.DescribeQuorumResponse) { done(resp) })
	default:
		panic("broker: no controller operation for " + kmsg.NameForKey(req.Key()))
	}
}

// forward sends req to the active controller, retrying while none is
// known, and calls done with the answer, or with one built by
// refuseWhole when there is none to give.
func (b *Broker) forward(req kmsg.Request, done func(kmsg.Response)) {
	deadline := b.w.Clock.Elapsed() + b.config.ControllerRequestTimeout
	backoff := forwardRetryMin
	var attempt func()
	attempt = func() {
		b.toController(req, b.config.ControllerRequestTimeout, func(resp kmsg.Response, err error) {
			notSent := errors.Is(err, errNoController) || errors.Is(err, peer.ErrUnknownPeer) || errors.Is(err, peer.ErrBackoff)
			retry := notSent || (err == nil && firstErrorCode(resp) == kerr.NotController.Code)
			if retry && !b.stopped && b.w.Clock.Elapsed()+backoff < deadline {
				b.w.Clock.AfterFunc(backoff, attempt)
				backoff = min(2*backoff, forwardRetryMax)
				return
			}
			switch {
			case err == nil:
				done(resp)
			case notSent:
				done(refuseWhole(req, kerr.NotController, "no active controller is known; retry later"))
			default:
				b.log.Warn("request to the controller failed", "api", kmsg.NameForKey(req.Key()), "error", err)
				done(refuseWhole(req, kerr.RequestTimedOut, "the controller's answer was lost ("+err.Error()+"); the request may have taken effect"))
			}
		})
	}
	attempt()
}
