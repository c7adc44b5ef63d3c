package broker

// FindCoordinator (key 10), versions 0-4.
//
// A group's coordinator is the leader of the __consumer_offsets partition
// its id hashes to (group.PartitionFor, Kafka's own hash), read from the
// metadata image; any broker can answer for any group. The first request
// for a group creates __consumer_offsets (ensureOffsetsTopic in groups.go)
// and is answered once that creation has committed; until the topic
// exists and the partition has a leader, the answer is
// COORDINATOR_NOT_AVAILABLE, which clients retry.
//
// Transactions are not implemented, so a transaction coordinator (key
// type 1) does not exist. The answer is TRANSACTIONAL_ID_AUTHORIZATION_FAILED
// with a message saying so: every client treats it as fatal for the
// transactional producer (as InitProducerId and Produce answer a
// transactional id here), where COORDINATOR_NOT_AVAILABLE would make it
// retry forever. An unknown key type is INVALID_REQUEST.
//
// Version notes: v1 adds the key type and error messages; v3 is flexible;
// v4 (KIP-699) looks up several keys at once and answers each in
// Coordinators, with its own error.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/group"
	"sluice/core/metadata"
)

func init() {
	registerAPI(&api{key: 10, advertisedMin: 0, honouredMin: 0, max: 4, handle: (*Broker).handleFindCoordinator})
}

// Coordinator key types.
const (
	coordinatorTypeGroup       = 0
	coordinatorTypeTransaction = 1
)

func (b *Broker) handleFindCoordinator(x *exchange) {
	req := x.request.Body.(*kmsg.FindCoordinatorRequest)
	keys := req.CoordinatorKeys
	if req.Version < 4 {
		keys = []string{req.CoordinatorKey}
	}
	answer := func() {
		resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
		for _, key := range keys {
			resp.Coordinators = append(resp.Coordinators, b.findCoordinator(req.CoordinatorType, key))
		}
		if req.Version < 4 {
			one := resp.Coordinators[0]
			resp.Coordinators = nil
			resp.ErrorCode, resp.ErrorMessage = one.ErrorCode, one.ErrorMessage
			resp.NodeID, resp.Host, resp.Port = one.NodeID, one.Host, one.Port
		}
		x.respond(resp)
	}
	if req.CoordinatorType == coordinatorTypeGroup && len(keys) > 0 {
		b.ensureOffsetsTopic(answer)
		return
	}
	answer()
}

// findCoordinator answers one key.
func (b *Broker) findCoordinator(keyType int8, key string) kmsg.FindCoordinatorResponseCoordinator {
	answer := kmsg.NewFindCoordinatorResponseCoordinator()
	answer.Key = key
	answer.NodeID, answer.Port = -1, -1
	fail := func(err *kerr.Error, message string) kmsg.FindCoordinatorResponseCoordinator {
		answer.ErrorCode = err.Code
		answer.ErrorMessage = &message
		return answer
	}
	switch keyType {
	case coordinatorTypeGroup:
	case coordinatorTypeTransaction:
		return fail(kerr.TransactionalIDAuthorizationFailed, "transactions are not supported by this broker")
	default:
		return fail(kerr.InvalidRequest, "unknown coordinator key type")
	}
	t := b.image.Topics[metadata.ConsumerOffsetsTopic]
	if t == nil || len(t.Partitions) == 0 {
		return fail(kerr.CoordinatorNotAvailable, "the offsets topic does not exist yet")
	}
	mp := t.Partitions[group.PartitionFor(key, int32(len(t.Partitions)))]
	if mp.Leader < 0 {
		return fail(kerr.CoordinatorNotAvailable, "the group's offsets partition has no leader")
	}
	answer.NodeID = mp.Leader
	if mp.Leader == b.config.NodeID {
		answer.Host, answer.Port = b.config.AdvertisedHost, b.config.AdvertisedPort
		return answer
	}
	leader, registered := b.image.Brokers[mp.Leader]
	if !registered || leader.Fenced {
		answer.NodeID = -1
		return fail(kerr.CoordinatorNotAvailable, "the group's coordinator is not available")
	}
	answer.Host, answer.Port = leader.Host, leader.Port
	return answer
}
