package simclient

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
)

// A send's attempts (producer.go holds the producer and its sends): each
// attempt builds the send's batch once, waits while an earlier send of its
// lane has no attempt out (a lane keeps its sends in sequence order, up to
// InFlightMax of them out), and goes out with the other sends to the same
// leader, one per lane, in one Produce.

// attempt sends the batch once, building it first if needed.
func (p *Producer) attempt(s *produce) {
	if s.finished {
		return
	}
	if p.client.Now() >= s.deadline {
		p.giveUp(s, fmt.Errorf("delivery timeout: %w", orNone(s.lastError)))
		return
	}
	if p.waitsForEarlier(s) {
		s.parked = true
		return
	}
	if s.batch == nil {
		if p.config.Idempotent && p.identity.id == batch.NoProducerID {
			s.waitingForIdentity = true
			p.withIdentity(func() {
				s.waitingForIdentity = false
				p.attempt(s)
			})
			return
		}
		p.build(s)
	}
	leader, _, err := p.client.Leader(s.lane.partition)
	if err != nil {
		s.lastError = err
		p.client.RefreshMetadata(func(error) { p.retry(s) })
		return
	}
	s.attempts++
	p.stats.Attempts++
	if s.attempts > 1 {
		p.stats.Retries++
	}
	s.outstanding = true
	defer p.unpark(s.lane)
	if p.config.Linger <= 0 {
		// One send, one Produce: the answer goes to it alone.
		p.client.Request(leader, p.produceRequest(s), func(resp kmsg.Response, err error) {
			p.answered(s, resp, err)
		})
		return
	}
	if p.lingering == nil {
		p.lingering = map[int32][]*produce{}
	}
	p.lingering[leader] = append(p.lingering[leader], s)
	if len(p.lingering[leader]) == 1 {
		p.client.After(p.config.Linger, "simclient.produce-linger", func() { p.flush(leader) })
	}
}

// waitsForEarlier reports whether an earlier send of s's lane has no
// attempt out (it waits to retry, for a producer id or for metadata): s
// must not overtake it, or the broker would see s's sequence first and
// refuse it as out of order, and a batch not yet built would take the
// earlier one's sequence.
func (p *Producer) waitsForEarlier(s *produce) bool {
	for _, earlier := range s.lane.sends {
		if earlier == s {
			return false
		}
		if !earlier.outstanding {
			return true
		}
	}
	return false
}

// unpark attempts, in order, the parked sends of a lane that no earlier
// send holds back any more.
func (p *Producer) unpark(l *lane) {
	for _, s := range l.sends {
		if !s.outstanding && !s.parked {
			return // it holds back every send behind it
		}
		if s.parked {
			s.parked = false
			p.attempt(s)
			if !s.outstanding {
				return
			}
		}
	}
}

// flush sends the attempts lingering for a broker, one Produce per round
// of them: a Produce carries one batch per partition, so a lane's second
// batch goes in the next request, behind its first.
func (p *Producer) flush(leader int32) {
	sends := slices.DeleteFunc(p.lingering[leader], func(s *produce) bool { return s.finished })
	delete(p.lingering, leader)
	for len(sends) > 0 {
		round, rest := oneSendPerLane(sends)
		p.send(leader, round)
		sends = rest
	}
}

// oneSendPerLane splits sends, in order, into the first of each lane and
// the rest.
func oneSendPerLane(sends []*produce) (round, rest []*produce) {
	for i, s := range sends {
		if slices.ContainsFunc(sends[:i], func(earlier *produce) bool { return earlier.lane == s.lane }) {
			rest = append(rest, s)
		} else {
			round = append(round, s)
		}
	}
	return round, rest
}

// send asks the broker to append every send's batch and gives each send
// the answer.
func (p *Producer) send(leader int32, sends []*produce) {
	p.client.Request(leader, p.produceRequest(sends...), func(resp kmsg.Response, err error) {
		for _, s := range sends {
			p.answered(s, resp, err)
		}
	})
}

// produceRequest asks to append every send's batch, one partition each
// (flush puts one send of a lane in a request), topics in the order they
// come.
func (p *Producer) produceRequest(sends ...*produce) *kmsg.ProduceRequest {
	// The request, its first topic and that topic's first partition come
	// in one allocation: a send without linger goes alone.
	one := new(struct {
		request   kmsg.ProduceRequest
		topic     [1]kmsg.ProduceRequestTopic
		partition [1]kmsg.ProduceRequestTopicPartition
	})
	req := &one.request
	req.Default()
	req.Topics = one.topic[:0]
	req.Acks = p.config.Acks
	req.TimeoutMillis = int32(p.config.ProduceTimeout / time.Millisecond)
	for _, s := range sends {
		i := slices.IndexFunc(req.Topics, func(t kmsg.ProduceRequestTopic) bool { return t.Topic == s.lane.partition.Topic })
		if i < 0 {
			topic := kmsg.NewProduceRequestTopic()
			topic.Topic = s.lane.partition.Topic
			if len(req.Topics) == 0 {
				topic.Partitions = one.partition[:0]
			}
			req.Topics = append(req.Topics, topic)
			i = len(req.Topics) - 1
		}
		partition := kmsg.NewProduceRequestTopicPartition()
		partition.Partition = s.lane.partition.Partition
		partition.Records = s.batch
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, partition)
	}
	return req
}

// build encodes the send's batch, stamping the producer's identity and
// the lane's next sequence when idempotent, and compressing it when the
// producer does.
func (p *Producer) build(s *produce) {
	sends := s.op.Invocation().Sends
	records := make([]batch.Record, len(sends))
	for i, send := range sends {
		records[i] = batch.Record{Key: []byte(send.Key), Value: []byte(send.Value)}
	}
	spec := batch.Spec{
		BaseTimestamp: p.client.WallClock().UnixMilli(),
		ProducerID:    batch.NoProducerID,
		ProducerEpoch: -1,
		BaseSequence:  -1,
		Records:       records,
	}
	if p.config.Idempotent {
		l := s.lane
		if l.sequenceGeneration != p.identity.generation {
			l.sequence, l.sequenceGeneration = 0, p.identity.generation
		}
		s.generation, s.sequence = p.identity.generation, l.sequence
		l.sequence = batch.IncrementSequence(l.sequence, s.count)
		spec.ProducerID, spec.ProducerEpoch, spec.BaseSequence = p.identity.id, p.identity.epoch, s.sequence
	}
	s.batch = batch.Build(spec)
	if p.config.Compression != batch.CompressionNone {
		s.batch = compressBatch(p.client.codecs(), p.config.Compression, s.batch)
	}
}

// firstValue names the send by its first record's value.
func (s *produce) firstValue() string { return s.op.Invocation().Sends[0].Value }
