package simclient

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
	"sluice/jepsen/history"
)

// ProducerConfig is a producer's settings. Zero durations take the defaults
// in limits.go.
type ProducerConfig struct {
	// Acks is acks: -1 (all: the broker answers once the write is
	// committed) or 1 (the leader answers once the write is in its log).
	Acks int16
	// Idempotent is enable.idempotence: batches carry a producer id and
	// per-partition sequence, so retries are deduplicated.
	Idempotent bool

	DeliveryTimeout time.Duration // delivery.timeout.ms: how long a send may retry
	ProduceTimeout  time.Duration // the Produce request's TimeoutMillis
	RetryBackoff    time.Duration // retry.backoff.ms
	RetryBackoffMax time.Duration // retry.backoff.max.ms
	// Linger is linger.ms: an attempt waits this long for others bound
	// for the same broker, and they go out as one Produce, a batch per
	// partition, as real clients send them. Zero: a Produce per attempt.
	Linger time.Duration
	// Compression is compression.type, as a batch codec (core/batch's
	// Compression constants): every batch is sent compressed with it, so
	// the broker stores, replicates and serves it whole, and consumers
	// decompress it. Zero: uncompressed.
	Compression int
	// InFlightMax is how many batches one partition may have in flight
	// at once (max.in.flight.requests.per.connection, 1 to
	// inFlightMaxIdempotent, more than one only when idempotent): they
	// go out in sequence order, and when one must be retried the ones
	// behind it wait until it has gone out again, as Kafka's idempotent
	// producer keeps them in order. Zero: one.
	InFlightMax int
}

func (c ProducerConfig) withDefaults() ProducerConfig {
	if c.Acks != 1 && c.Acks != -1 {
		panic(fmt.Sprintf("simclient: acks=%d; this producer sends acks=1 or acks=-1", c.Acks))
	}
	if c.DeliveryTimeout <= 0 {
		c.DeliveryTimeout = deliveryTimeoutDefault
	}
	if c.ProduceTimeout <= 0 {
		c.ProduceTimeout = produceTimeoutDefault
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = retryBackoffDefault
	}
	if c.InFlightMax <= 0 {
		c.InFlightMax = 1
	}
	if c.InFlightMax > inFlightMaxIdempotent || c.InFlightMax > 1 && !c.Idempotent {
		panic(fmt.Sprintf("simclient: %d batches in flight per partition; at most %d, and more than one only when idempotent", c.InFlightMax, inFlightMaxIdempotent))
	}
	if c.Compression < batch.CompressionNone || c.Compression > batch.CompressionZstd {
		panic(fmt.Sprintf("simclient: compression codec %d; Kafka's are 0 to %d", c.Compression, batch.CompressionZstd))
	}
	if c.RetryBackoffMax < c.RetryBackoff {
		c.RetryBackoffMax = max(retryBackoffMaxDefault, c.RetryBackoff)
	}
	return c
}

// Producer sends batches of one or more records (a send is one batch, its
// records one history operation), up to InFlightMax batches in flight per
// partition, and records each send in the history as an invoke completed ok
// (with the offsets the broker gave), fail or info (see doc.go).
type Producer struct {
	client    *Client
	config    ProducerConfig
	recorder  *history.Recorder
	processes *Processes

	lanes map[history.TopicPartition]*lane // lookups only
	// inFlight counts the sends not yet finished (see InFlight), kept as
	// they change: a workload asks after every event.
	inFlight int
	identity producerIdentity
	stats    ProducerStats
	// lingering holds, by broker, the attempts waiting to go out
	// together (Linger), in the order they came.
	lingering map[int32][]*produce
	// sent is where a send's payload is put together for the history,
	// which copies it: a slice literal passed to the recorder escaped to
	// the heap, twice a send.
	sent []history.Send
	// one holds Send's record, so that a send of one record builds no
	// slice.
	one [1]KeyValue
	// usedProcesses are every process the producer recorded on, in the
	// order taken: one per lane and one per info, so bounded by the
	// history's size.
	usedProcesses []int
}

// lane is one partition's stream of sends: its unfinished sends in
// sequence order, the history processes free to run the next ones (a send
// runs on one process, so one process per send in flight), and
// (idempotent) the next sequence number.
type lane struct {
	partition history.TopicPartition
	free      []int
	sends     []*produce
	// sequence is the next batch's sequence under identity generation
	// sequenceGeneration.
	sequence           int32
	sequenceGeneration int
}

// produce is one send: its history operation, its batch, and its retries.
type produce struct {
	producer *Producer
	lane     *lane
	op       *history.Pending
	process  int   // the history process the send runs on
	count    int32 // records in the batch
	done     func(SendResult)
	deadline int64
	attempts int
	backoff  time.Duration

	// batch is built once, so every retry sends the same bytes: with
	// idempotence, the same producer id, epoch and sequence.
	batch      []byte
	generation int // the identity generation batch was built under
	sequence   int32

	// maybeWritten is set once some attempt's outcome was unknown: the
	// send can then never be recorded as fail.
	maybeWritten bool
	lastError    error
	finished     bool
	// waitingForIdentity is set while the send waits for InitProducerId,
	// which the delivery timeout must be able to interrupt.
	waitingForIdentity bool
	// outstanding is set while an attempt is out (sent, or lingering to
	// be), unanswered.
	outstanding bool
	// parked is set while the send waits for an earlier send of its lane
	// to go out first (see waitsForEarlier).
	parked bool

	// attemptEvent and deadlineEvent are the actions of the events that
	// attempt the send and end its delivery timeout: kept in the send,
	// so that scheduling them allocates nothing.
	attemptEvent  sendAttempt
	deadlineEvent sendDeadline
}

// sendAttempt is an event that attempts a send (kernel.Action).
type sendAttempt struct{ send *produce }

func (a *sendAttempt) Run() { a.send.producer.attempt(a.send) }

// sendDeadline is the event that ends a send's delivery timeout
// (kernel.Action).
type sendDeadline struct{ send *produce }

func (d *sendDeadline) Run() { d.send.producer.deliveryTimedOut(d.send) }

// SendResult is how a send ended, as recorded in the history.
type SendResult struct {
	Type   history.Type // OK, Fail or Info
	Offset int64        // for OK: the batch's first record's
	Err    error        // for Fail and Info
}

// KeyValue is one record a send carries.
type KeyValue struct{ Key, Value string }

// ProducerStats counts a producer's sends by outcome.
type ProducerStats struct {
	Sends, OK, Failed, Unknown int64
	// Records counts the records of every send (a send is a batch).
	Records           int64
	Attempts, Retries int64
	ProducerIDs       int64
	LostToCrash       int64
	// UnplacedWrites counts answers that said a batch was written but
	// gave no offset: a broker bug (its client cannot place the write).
	UnplacedWrites int64
}

// ErrLaneBusy: Send was called for a partition whose previous send is not
// finished.
var ErrLaneBusy = errors.New("simclient: a send to this partition is already in flight")

// NewProducer builds a producer on a client.
func NewProducer(c *Client, config ProducerConfig, recorder *history.Recorder, processes *Processes) *Producer {
	p := &Producer{client: c, config: config.withDefaults(), recorder: recorder, processes: processes}
	p.forget()
	c.OnCrash(p.crashed)
	return p
}

// forget drops the producer's in-memory state, as a new process starts.
func (p *Producer) forget() {
	p.lanes = map[history.TopicPartition]*lane{}
	p.inFlight = 0
	p.identity = producerIdentity{id: batch.NoProducerID}
}

// Stats returns the producer's counters.
func (p *Producer) Stats() ProducerStats { return p.stats }

// Config is the producer's settings.
func (p *Producer) Config() ProducerConfig { return p.config }

// Idle reports whether tp has no send in flight.
func (p *Producer) Idle(tp history.TopicPartition) bool {
	l := p.lanes[tp]
	return l == nil || len(l.sends) == 0
}

// HasRoom reports whether tp may take another send now (fewer than
// InFlightMax in flight).
func (p *Producer) HasRoom(tp history.TopicPartition) bool {
	l := p.lanes[tp]
	return l == nil || len(l.sends) < p.config.InFlightMax
}

// InFlight counts the sends not yet finished.
func (p *Producer) InFlight() int { return p.inFlight }

// Send produces one record with the given key and value to tp (see
// SendBatch).
func (p *Producer) Send(tp history.TopicPartition, key, value string, done func(SendResult)) error {
	p.one[0] = KeyValue{Key: key, Value: value}
	return p.SendBatch(tp, p.one[:], done)
}

// SendBatch produces records to tp as one batch, as a client's batch of
// sends to one partition goes: it records the invoke now and calls done
// once the send is recorded as finished, from a later event. The batch is
// written whole or not at all, its records at consecutive offsets. Values
// must be unique in the run. It fails at once, with nothing recorded, if
// tp already has InFlightMax sends in flight, records is empty or longer
// than batchRecordsMax, or the history is full.
func (p *Producer) SendBatch(tp history.TopicPartition, records []KeyValue, done func(SendResult)) error {
	if len(records) == 0 || len(records) > batchRecordsMax {
		return fmt.Errorf("simclient: a batch of %d records; this producer sends 1 to %d", len(records), batchRecordsMax)
	}
	if !p.client.Alive() {
		return fmt.Errorf("simclient: %s is not running", p.client.Name())
	}
	l := p.lanes[tp]
	if l == nil {
		if len(p.lanes) >= lanesMax {
			return fmt.Errorf("simclient: producer already sends to %d partitions", lanesMax)
		}
		l = &lane{partition: tp, free: []int{p.takeProcess()}}
		p.lanes[tp] = l
	}
	if len(l.sends) >= p.config.InFlightMax {
		return ErrLaneBusy
	}
	if len(l.free) == 0 {
		l.free = append(l.free, p.takeProcess())
	}
	process := l.free[len(l.free)-1]
	p.sent = p.sent[:0]
	for _, r := range records {
		p.sent = append(p.sent, history.Send{Partition: tp, Key: r.Key, Value: r.Value, Offset: history.OffsetUnknown})
	}
	op, err := p.recorder.Invoke(process, history.FuncSend, history.Payload{Sends: p.sent})
	if err != nil {
		return err
	}
	l.free = l.free[:len(l.free)-1]
	p.client.WantTopic(tp.Topic)
	s := &produce{
		producer: p, lane: l, op: op, process: process, count: int32(len(records)), done: done,
		deadline: p.client.Now() + int64(p.config.DeliveryTimeout),
		backoff:  p.config.RetryBackoff,
	}
	s.attemptEvent.send, s.deadlineEvent.send = s, s
	l.sends = append(l.sends, s)
	p.inFlight++
	p.stats.Sends++
	p.stats.Records += int64(len(records))
	p.client.laterAction(&s.attemptEvent)
	p.client.AfterAction(p.config.DeliveryTimeout, "simclient.delivery-timeout", &s.deadlineEvent)
	return nil
}

// deliveryTimedOut ends a send's delivery timeout. Attempts check the
// deadline themselves; only a send waiting for a producer id, or parked
// behind an earlier send of its lane, needs waking.
func (p *Producer) deliveryTimedOut(s *produce) {
	if !s.finished && (s.waitingForIdentity || s.parked) {
		p.giveUp(s, fmt.Errorf("delivery timeout waiting for a producer id: %w", orNone(s.lastError)))
	}
}

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
		case slices.ContainsFunc(l.sends[at:], func(later *produce) bool { return later.batch != nil && later.generation == s.generation }):
			// Batches behind it took the sequences after it: none
			// can be appended now, and a new identity starts over.
			p.abandonIdentity(s.generation)
		default:
			// Nothing was written: the sequence was not used, and
			// the next batch must take it.
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

// crashed records every send in flight as info: the process died with it
// and nobody will learn what became of it. Then the producer forgets.
func (p *Producer) crashed() {
	for _, l := range p.sortedLanes() {
		for _, s := range l.sends {
			s.finished = true
			p.stats.Unknown++
			p.stats.LostToCrash++
			s.op.Info("client crashed with the send in flight")
		}
	}
	p.lingering = nil
	p.forget()
}

func (p *Producer) sortedLanes() []*lane {
	lanes := make([]*lane, 0, len(p.lanes))
	for _, l := range p.lanes { // order-independent: sorted below
		lanes = append(lanes, l)
	}
	slices.SortFunc(lanes, func(a, b *lane) int { return a.partition.Compare(b.partition) })
	return lanes
}

// jitter spreads a backoff by 20% either way, as Kafka clients do.
func jitter(c *Client, d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.8 + 0.4*c.rng.Float64()))
}

func orNone(err error) error {
	if err == nil {
		return errors.New("no attempt answered")
	}
	return err
}

// takeProcess returns a new history process for a lane.
func (p *Producer) takeProcess() int {
	process := p.processes.Next()
	p.usedProcesses = append(p.usedProcesses, process)
	return process
}

// Processes lists every history process the producer recorded on: a
// checker told which producers may lose what they were acknowledged
// (acks=1) finds their sends by these.
func (p *Producer) Processes() []int { return slices.Clone(p.usedProcesses) }
