package simclient

import (
	"time"

	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
)

// producerIdentity is an idempotent producer's id and epoch (KIP-98), got
// from InitProducerId. The broker deduplicates a retried batch by (id,
// epoch, sequence), so a batch keeps the identity it was built with through
// all its retries; a new identity starts every partition's sequence at 0.
type producerIdentity struct {
	id    int64 // batch.NoProducerID until known
	epoch int16
	// generation counts identities obtained; a lane's sequence belongs
	// to one generation and restarts at 0 in the next.
	generation int

	requesting bool
	waiters    []func()
}

// withIdentity calls then once the producer has an identity: now, from a
// later event, or once InitProducerId has answered. It retries
// InitProducerId with backoff until it succeeds or the client crashes.
func (p *Producer) withIdentity(then func()) {
	identity := &p.identity
	if identity.id != batch.NoProducerID {
		p.client.later(then)
		return
	}
	identity.waiters = append(identity.waiters, then)
	if !identity.requesting {
		identity.requesting = true
		p.requestIdentity(p.config.RetryBackoff)
	}
}

func (p *Producer) requestIdentity(backoff time.Duration) {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionTimeoutMillis = -1
	req.ProducerID = -1
	req.ProducerEpoch = -1
	p.client.RequestAny(req, func(resp kmsg.Response, err error) {
		if err == nil {
			answer := resp.(*kmsg.InitProducerIDResponse)
			if answer.ErrorCode == 0 {
				p.adoptIdentity(answer.ProducerID, answer.ProducerEpoch)
				return
			}
			err = codeError(answer.ErrorCode)
			if metadataIsStale(answer.ErrorCode) {
				p.client.RefreshMetadata(func(error) {})
			}
		}
		p.client.note(fmt.Sprintf("InitProducerId failed: %v", err))
		next := min(backoff*2, p.config.RetryBackoffMax)
		p.client.After(jitter(p.client, backoff), "simclient.producer-id-retry", func() { p.requestIdentity(next) })
	})
}

func (p *Producer) adoptIdentity(id int64, epoch int16) {
	identity := &p.identity
	identity.id, identity.epoch = id, epoch
	identity.generation++
	identity.requesting = false
	p.stats.ProducerIDs++
	p.client.note(fmt.Sprintf("producer id %d epoch %d", id, epoch))
	waiters := identity.waiters
	identity.waiters = nil
	for _, then := range waiters {
		then()
	}
}

// abandonIdentity forgets the identity, so the next batch waits for a new
// one: after a batch whose outcome is unknown, the broker's idea of the
// sequence may differ from the producer's, and a fresh id is the safe way
// forward.
func (p *Producer) abandonIdentity(generation int) {
	identity := &p.identity
	if identity.generation != generation || identity.id == batch.NoProducerID {
		return // already abandoned, or replaced since
	}
	p.client.note(fmt.Sprintf("abandoning producer id %d", identity.id))
	identity.id = batch.NoProducerID
}
