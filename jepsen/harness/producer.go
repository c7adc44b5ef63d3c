package harness

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"sluice/jepsen/history"
)

// producer is one kgo producer client shared by several logical
// processes, each sending one record at a time and waiting for its
// answer: an acknowledgement (ok, with the offset) or an error (info: a
// produce that timed out or lost its connection may still have been
// written).
//
// A plain (not idempotent) producer never retries (RecordRetries(0)): a
// plain send retried after a lost answer may be written twice, which
// Kafka permits and the duplicate checker would rightly flag. The
// simulator's plain producer gives up on such a send for the same reason.
// An idempotent producer retries until its delivery timeout: the broker
// must then keep each record once.
type producer struct {
	name        string
	index       int // among the workload's producers
	client      *kgo.Client
	log         *historyLog
	topic       string
	partitions  int32
	concurrency int

	acknowledged, unknown atomic.Int64
	running               sync.WaitGroup
}

// producerSettings says how a producer writes.
type producerSettings struct {
	name  string
	index int
	// acksAll asks for acks=all; otherwise acks=1 (the leader alone).
	acksAll bool
	// idempotent turns on the idempotent producer (which needs acks=all).
	idempotent  bool
	concurrency int
}

func newProducer(cluster *Cluster, log *historyLog, topic string, partitions int32, settings producerSettings) (*producer, error) {
	options := cluster.ClientOptions(
		kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordDeliveryTimeout(produceDeliveryTimeout),
		kgo.ProduceRequestTimeout(produceRequestTimeout),
		kgo.ProducerLinger(0),
	)
	switch {
	case settings.acksAll && settings.idempotent:
		options = append(options, kgo.RequiredAcks(kgo.AllISRAcks()))
	case settings.acksAll:
		options = append(options, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(), kgo.RecordRetries(0))
	default:
		options = append(options, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.RecordRetries(0))
	}
	client, err := kgo.NewClient(options...)
	if err != nil {
		return nil, fmt.Errorf("harness: producer %s: %w", settings.name, err)
	}
	return &producer{
		name: settings.name, index: settings.index, client: client, log: log, topic: topic, partitions: partitions,
		concurrency: settings.concurrency,
	}, nil
}

// start runs the producer's processes until ctx ends; each send waits for
// a tick of the shared rate limiter.
func (p *producer) start(ctx context.Context, ticks <-chan time.Time, failed func(error)) {
	for slot := range p.concurrency {
		p.running.Add(1)
		go func() {
			defer p.running.Done()
			partition := int32((p.index*p.concurrency + slot) % int(p.partitions))
			if err := p.process(ctx, ticks, partition); err != nil {
				failed(err)
			}
		}()
	}
}

// process sends records to one partition until ctx ends, one at a time,
// under one process number until an answer is unknown, then under a new
// one. Each process keeps to its partition, so that a partition stuck in
// a fault holds up only its own processes.
func (p *producer) process(ctx context.Context, ticks <-chan time.Time, partitionNumber int32) error {
	process := p.log.newProcess()
	for sequence := 0; ; sequence++ {
		select {
		case <-ctx.Done():
			return nil
		case <-ticks:
		}
		partition := history.TopicPartition{Topic: p.topic, Partition: partitionNumber}
		value := fmt.Sprintf("%s-%d-%d", p.name, process, sequence)
		op, err := p.log.invoke(process, history.FuncSend, history.Payload{Sends: []history.Send{
			{Partition: partition, Value: value, Offset: history.OffsetUnknown},
		}})
		if err != nil {
			return err
		}
		type answer struct {
			offset int64
			err    error
		}
		answered := make(chan answer, 1)
		// Not ctx: a record already handed to the client is never
		// cancelled, so that its outcome is what the broker said.
		p.client.Produce(context.Background(), &kgo.Record{Partition: partition.Partition, Value: []byte(value)},
			func(r *kgo.Record, err error) { answered <- answer{offset: r.Offset, err: err} })
		result := <-answered
		if result.err != nil {
			op.info(result.err.Error())
			p.unknown.Add(1)
			process = p.log.newProcess()
			continue
		}
		op.ok(history.Payload{Sends: []history.Send{{Partition: partition, Value: value, Offset: result.offset}}})
		p.acknowledged.Add(1)
	}
}

// stop waits for the processes (ctx must be done), so every record sent
// is answered: kgo answers what it cannot deliver by its delivery
// timeout. Then the client closes.
func (p *producer) stop() {
	p.running.Wait()
	p.client.Close()
}
