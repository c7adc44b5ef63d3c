package simclient

import (
	"errors"
	"fmt"
	"slices"
	"time"

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
