package brokerworkload

import (
	"fmt"
	"time"

	"sluice/jepsen/history"
	"sluice/sim/kernel"
	"sluice/sim/simclient"
)

// producerDriver sends values from one producer to its partitions, each
// partition a lane that sends, waits for the outcome, thinks, and sends
// again. It is the workload's generator, not part of the client: it keeps
// counting values across client crashes so every value is unique.
type producerDriver struct {
	index      int
	client     *simclient.Client
	producer   *simclient.Producer
	partitions []history.TopicPartition
	next       int
	// batchMax and batchRNG draw how many records each send carries: a
	// stream of the producer's own, used only when it batches.
	batchMax int
	batchRNG random
}

// newClient attaches a client machine to the network.
func (r *run) newClient(name string) *simclient.Client {
	return simclient.New(r.kernel, r.network, simclient.Config{
		Name:             name,
		ClientID:         name,
		Bootstrap:        []string{nodeAddress},
		AutoCreateTopics: true,
		RequestTimeout:   r.settings.requestTimeout,
		Codecs:           r.codecs,
	})
}

// startClients builds the producers and readers and sets them going.
func (r *run) startClients() {
	for i, ps := range r.settings.producers {
		c := r.newClient(fmt.Sprintf("p%d", i+1))
		d := &producerDriver{index: i + 1, client: c, batchMax: ps.batchMax}
		d.producer = simclient.NewProducer(c, simclient.ProducerConfig{
			Acks:            ps.acks,
			Idempotent:      ps.idempotent,
			DeliveryTimeout: r.settings.deliveryTimeout,
			ProduceTimeout:  r.settings.produceTimeout,
			Compression:     ps.compression,
		}, r.recorder, r.processes)
		if ps.batchMax > 1 {
			d.batchRNG = kernel.NewRand(r.kernel.Seed(), fmt.Sprintf("batching/p%d", i+1))
		}
		for _, p := range ps.partitions {
			d.partitions = append(d.partitions, history.TopicPartition{Topic: topicName, Partition: p})
		}
		c.OnRestart(func() { r.drive(d) })
		r.producers = append(r.producers, d)
		r.clients = append(r.clients, c)
		r.drive(d)
	}
	for i, partitions := range r.settings.readers {
		c := r.newClient(fmt.Sprintf("r%d", i+1))
		reader := simclient.NewReader(c, simclient.ReaderConfig{FetchMaxWait: r.settings.fetchMaxWait}, r.recorder, r.processes)
		var assigned []history.TopicPartition
		for _, p := range partitions {
			assigned = append(assigned, history.TopicPartition{Topic: topicName, Partition: p})
		}
		if err := reader.Assign(assigned); err != nil {
			panic(fmt.Sprintf("brokerworkload: assign: %v", err))
		}
		r.readers = append(r.readers, reader)
		r.clients = append(r.clients, c)
	}
}

// drive starts every lane of a producer.
func (r *run) drive(d *producerDriver) {
	for _, tp := range d.partitions {
		r.sendNext(d, tp)
	}
}

// sendNext sends the lane's next values (a batch of one or more); when
// it is done, the lane thinks for a while (not during a burst) and sends
// again, until the liveness phase stops new sends. Its events belong to
// the client's process, so a client crash stops the lane until the
// restart starts it again.
func (r *run) sendNext(d *producerDriver, tp history.TopicPartition) {
	if r.stopSending || !d.client.Alive() || !d.producer.Idle(tp) {
		return
	}
	count := 1
	if d.batchRNG != nil {
		count += d.batchRNG.IntN(d.batchMax)
	}
	records := make([]simclient.KeyValue, count)
	for i := range records {
		records[i] = simclient.KeyValue{Key: fmt.Sprintf("k%d", d.next%8), Value: fmt.Sprintf("p%d-%d", d.index, d.next)}
		d.next++
	}
	err := d.producer.SendBatch(tp, records, func(simclient.SendResult) {
		think := time.Duration(0)
		if r.kernel.Now() >= r.burstUntil {
			think = kernel.Between(r.rng, 0, r.settings.thinkMax)
		}
		d.client.After(think, "workload.think", func() { r.sendNext(d, tp) })
	})
	if err != nil {
		panic(fmt.Sprintf("brokerworkload: send %s: %v", records[0].Value, err))
	}
}

// restartClient restarts a crashed client (its restart hooks start its
// lanes or re-assign its reader).
func (r *run) restartClient(c *simclient.Client) {
	if !c.Alive() {
		r.recordFaultEnd("client-crash-" + c.Name())
		c.Restart()
	}
}
