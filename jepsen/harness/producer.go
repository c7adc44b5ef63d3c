package harness

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"sluice/jepsen/bench"
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
	// batchRecords is how many records one send hands the client at once.
	batchRecords int

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
	// batchRecords is how many records each send carries (at least 1);
	// compression names the codec ("" for franz-go's default).
	batchRecords int
	compression  string
}

func newProducer(cluster *Cluster, log *historyLog, topic string, partitions int32, settings producerSettings) (*producer, error) {
	options := cluster.ClientOptions(
		kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.RecordDeliveryTimeout(produceDeliveryTimeout),
		kgo.ProduceRequestTimeout(produceRequestTimeout),
		kgo.ProducerLinger(0),
	)
	if settings.compression != "" {
		codec, err := bench.CompressionCodec(settings.compression)
		if err != nil {
			return nil, fmt.Errorf("harness: producer %s: %w", settings.name, err)
		}
		options = append(options, kgo.ProducerBatchCompression(codec))
	}
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
		concurrency: settings.concurrency, batchRecords: settings.batchRecords,
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

// process sends records to one partition until ctx ends, one send at a
// time (batchRecords records handed to the client together, which go out
// as one batch unless the client splits them), under one process number
// until an answer is unknown, then under a new one. Each process keeps to
// its partition, so that a partition stuck in a fault holds up only its
// own processes.
func (p *producer) process(ctx context.Context, ticks <-chan time.Time, partitionNumber int32) error {
	process := p.log.newProcess()
	partition := history.TopicPartition{Topic: p.topic, Partition: partitionNumber}
	sends := make([]history.Send, p.batchRecords)
	type answer struct {
		index  int
		offset int64
		err    error
	}
	// Room for every answer of a send, so the client's callbacks never
	// wait on this process.
	answered := make(chan answer, p.batchRecords)
	for sequence := 0; ; {
		select {
		case <-ctx.Done():
			return nil
		case <-ticks:
		}
		for i := range sends {
			sends[i] = history.Send{Partition: partition, Value: fmt.Sprintf("%s-%d-%d", p.name, process, sequence), Offset: history.OffsetUnknown}
			sequence++
		}
		op, err := p.log.invoke(process, history.FuncSend, history.Payload{Sends: sends})
		if err != nil {
			return err
		}
		// Not ctx: a record already handed to the client is never
		// cancelled, so that its outcome is what the broker said.
		for i, s := range sends {
			p.client.Produce(context.Background(), &kgo.Record{Partition: partition.Partition, Value: []byte(s.Value)},
				func(r *kgo.Record, err error) { answered <- answer{index: i, offset: r.Offset, err: err} })
		}
		var failure error
		for range sends {
			a := <-answered
			sends[a.index].Offset = a.offset
			failure = cmp.Or(failure, a.err)
		}
		if failure != nil {
			// Some records may be written and others not (the client
			// may have split them): the send's outcome is unknown.
			op.info(failure.Error())
			p.unknown.Add(1)
			process = p.log.newProcess()
			continue
		}
		op.ok(history.Payload{Sends: sends})
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
