package simclient

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
	"sluice/jepsen/history"
)

// A send's answers (producer.go holds the producer and its sends): an
// attempt's result is read, a retriable error retried within the delivery
// timeout, and the send finished in the history once its outcome is known
// or given up on.

// answered reads one attempt's result and finishes or retries the send.
func (p *Producer) answered(s *produce, resp kmsg.Response, err error) {
	if s.finished {
		return
	}
	s.outstanding = false
	var o outcome
	offset := int64(-1)
	switch {
	case err != nil:
		o = transportOutcome(err)
	default:
		o, offset, err = p.readAnswer(s, resp.(*kmsg.ProduceResponse))
	}
	if o.mayBeWritten() && o != written {
		s.maybeWritten = true
	}
	switch {
	case o == written:
		p.finish(s, SendResult{Type: history.OK, Offset: offset})
	case o == sequenceBroken && s != s.lane.sends[0]:
		// An earlier batch of the lane was not appended (it is being
		// retried): this one follows it again.
		s.lastError = err
		p.retry(s)
	case o == sequenceBroken:
		p.abandonIdentity(s.generation)
		p.giveUp(s, err)
	case o.retriable() && (o != unknownRetriable || p.config.Idempotent):
		s.lastError = err
		if staleMetadata(err) {
			p.client.RefreshMetadata(func(error) {})
		}
		p.retry(s)
	default:
		p.giveUp(s, err)
	}
}

// readAnswer finds the send's partition in a Produce answer.
func (p *Producer) readAnswer(s *produce, resp *kmsg.ProduceResponse) (outcome, int64, error) {
	tp := s.lane.partition
	for _, t := range resp.Topics {
		if t.Topic != tp.Topic {
			continue
		}
		for _, answer := range t.Partitions {
			if answer.Partition != tp.Partition {
				continue
			}
			o := produceOutcome(answer.ErrorCode, p.config.Acks)
			if o == written && answer.BaseOffset < 0 {
				p.stats.UnplacedWrites++
				return unknownFatal, -1, fmt.Errorf("%w: produce answered without an offset", ErrProtocol)
			}
			return o, answer.BaseOffset, codeError(answer.ErrorCode)
		}
	}
	// An answer that leaves our partition out is a broken broker: we do
	// not know what it did.
	return unknownFatal, -1, fmt.Errorf("%w: produce answer does not mention %s", ErrProtocol, tp)
}

// retry tries again after a backoff, if the delivery timeout allows.
func (p *Producer) retry(s *produce) {
	if s.finished {
		return
	}
	wait := jitter(p.client, s.backoff)
	s.backoff = min(s.backoff*2, p.config.RetryBackoffMax)
	if p.client.Now()+int64(wait) >= s.deadline {
		p.giveUp(s, fmt.Errorf("delivery timeout: %w", orNone(s.lastError)))
		return
	}
	p.client.AfterAction(wait, "simclient.produce-retry", &s.attemptEvent)
}

// giveUp ends a send that was not acknowledged: fail if nothing can have
// been written, info otherwise.
func (p *Producer) giveUp(s *produce, err error) {
	if s.maybeWritten {
		p.finish(s, SendResult{Type: history.Info, Err: err})
		return
	}
	p.finish(s, SendResult{Type: history.Fail, Err: err})
}

// finish records the send's completion, frees its place in the lane and
// its process, and lets the lane's parked sends go.
func (p *Producer) finish(s *produce, result SendResult) {
	if s.finished {
		panic(fmt.Sprintf("simclient: send of %q finished twice", s.firstValue()))
	}
	s.finished = true
	l := s.lane
	at := slices.Index(l.sends, s)
	if at < 0 {
		panic(fmt.Sprintf("simclient: send of %q finished outside its lane", s.firstValue()))
	}
	l.sends = slices.Delete(l.sends, at, at+1)
	p.inFlight--
	if p.inFlight < 0 {
		panic(fmt.Sprintf("simclient: send of %q finished with no send counted in flight", s.firstValue()))
	}
	switch result.Type {
	case history.OK:
		p.stats.OK++
		l.free = append(l.free, s.process)
		p.sent = append(p.sent[:0], s.op.Invocation().Sends...)
		for i := range p.sent {
			p.sent[i].Offset = result.Offset + int64(i)
		}
		s.op.OK(history.Payload{Sends: p.sent})
	case history.Fail:
		p.stats.Failed++
		s.op.Fail(result.Err.Error())
		l.free = append(l.free, s.process)
		switch {
		case !p.config.Idempotent || s.batch == nil || s.generation != p.identity.generation || l.sequenceGeneration != s.generation:
		case l.sequence != batch.IncrementSequence(s.sequence, s.count):
			// Batches built after it took the sequences after it,
			// and may be written already, acknowledged even: a
			// broker takes any sequence from a producer it holds no
			// state of, so a later batch sent to a new leader can
			// land while this one waits on the old leader's
			// connection and never leaves it. Handing this one's
			// sequence to the next batch would send new records
			// under a sequence the broker holds, which it answers
			// as a duplicate, with the old records' offsets
			// (cluster seed 4622480). A new identity starts over.
			p.abandonIdentity(s.generation)
		default:
			// Nothing was written, and no batch took a sequence
			// after it: the next batch takes its sequence.
			l.sequence = s.sequence
		}
	case history.Info:
		p.stats.Unknown++
		s.op.Info(result.Err.Error())
		// The process is never used again: a send of unknown outcome
		// may still take effect, after anything recorded later on it.
		l.free = append(l.free, p.takeProcess())
		if p.config.Idempotent {
			p.abandonIdentity(s.generation)
		}
	default:
		panic(fmt.Sprintf("simclient: send finished as %s", result.Type))
	}
	p.unpark(l)
	if s.done != nil {
		s.done(result)
	}
}
