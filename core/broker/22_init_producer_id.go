package broker

// InitProducerId (key 22), versions 0-4.
//
// Hands an idempotent producer a fresh producer id with epoch 0. Ids come
// from blocks the controller allocates (AllocateProducerIds, KIP-730), so
// two brokers never hand out the same id; a broker asks for the next block
// when its current one runs out, and requests arriving meanwhile wait.
// Without a transactional id Kafka ignores a ProducerId/ProducerEpoch the
// client sends (v3+, KIP-360) and always allocates a new id; so does this.
// Transactions are not implemented: a transactional id is refused with
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED, which clients report instead of
// retrying (an empty one, and a ProducerId without a ProducerEpoch or the
// reverse, are INVALID_REQUEST, as in Kafka).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(&api{key: 22, advertisedMin: 0, honouredMin: 0, max: 4, handle: (*Broker).handleInitProducerID})
}

// producerIDWaitersMax bounds InitProducerId requests waiting for a block.
const producerIDWaitersMax = 10_000

// producerIDBlock is this broker's current block of producer ids.
type producerIDBlock struct {
	next, end  int64 // ids in [next, end) are free
	requesting bool
	waiters    []func(id int64, err error)
}

func (b *Broker) handleInitProducerID(x *exchange) {
	req := x.request.Body.(*kmsg.InitProducerIDRequest)
	resp := req.ResponseKind().(*kmsg.InitProducerIDResponse)
	resp.ProducerID = -1
	resp.ProducerEpoch = -1
	switch {
	case req.TransactionalID != nil && *req.TransactionalID == "":
		// Kafka's transaction coordinator refuses an empty id so.
		resp.ErrorCode = kerr.InvalidRequest.Code
		x.respond(resp)
		return
	case req.TransactionalID != nil:
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		x.respond(resp)
		return
	case req.Version >= 3 && (req.ProducerID == -1) != (req.ProducerEpoch == -1):
		// An id without an epoch or the reverse: Kafka's KafkaApis
		// refuses the pair before looking at either.
		resp.ErrorCode = kerr.InvalidRequest.Code
		x.respond(resp)
		return
	}
	b.nextProducerID(func(id int64, err error) {
		if err != nil {
			resp.ErrorCode = errorCode(err)
		} else {
			resp.ProducerID, resp.ProducerEpoch = id, 0
		}
		x.respond(resp)
	})
}

// nextProducerID calls done with an unused producer id, now or once the
// next block arrives.
func (b *Broker) nextProducerID(done func(id int64, err error)) {
	block := &b.producerIDs
	if block.next < block.end {
		id := block.next
		block.next++
		done(id, nil)
		return
	}
	if len(block.waiters) >= producerIDWaitersMax {
		done(-1, kerr.CoordinatorLoadInProgress)
		return
	}
	block.waiters = append(block.waiters, done)
	b.requestProducerIDBlock()
}

// requestProducerIDBlock asks the controller for the next block, unless a
// request is already out or the broker has not registered yet (the request
// must carry its broker epoch; registration calls this again).
func (b *Broker) requestProducerIDBlock() {
	block := &b.producerIDs
	if block.requesting || len(block.waiters) == 0 || b.brokerEpoch == 0 {
		return
	}
	block.requesting = true
	req := kmsg.NewPtrAllocateProducerIDsRequest()
	req.BrokerID = b.config.NodeID
	req.BrokerEpoch = b.brokerEpoch
	req.Version = allocateProducerIDsVersion
	b.forward(req, func(r kmsg.Response) {
		resp := r.(*kmsg.AllocateProducerIDsResponse)
		block.requesting = false
		waiters := block.waiters
		block.waiters = nil
		if resp.ErrorCode != 0 {
			for _, w := range waiters {
				w(-1, kerr.ErrorForCode(resp.ErrorCode))
			}
			return
		}
		block.next, block.end = resp.ProducerIDStart, resp.ProducerIDStart+int64(resp.ProducerIDLen)
		for _, w := range waiters {
			b.nextProducerID(w)
		}
	})
}
