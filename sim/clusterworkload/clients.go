package clusterworkload

import (
	"fmt"
	"strconv"
	"time"

	"sluice/jepsen/history"
	"sluice/sim/kernel"
	"sluice/sim/scenario"
	"sluice/sim/simclient"
)

// producerDriver sends values from one producer to its partitions, each
// partition a lane that sends, waits for the outcome, thinks, and sends
// again. It is the workload's generator, not part of the client: it keeps
// counting across client crashes so every value is unique.
type producerDriver struct {
	settings   scenario.Producer
	client     *simclient.Client
	producer   *simclient.Producer
	partitions []history.TopicPartition
	lanes      []*producerLane // one per partition, in the same order
	next       int
	// batchRNG draws how many records each send carries, when the
	// producer batches (settings.BatchMax): a stream of its own, so a
	// producer that sends a record at a time draws nothing.
	batchRNG random
	// batch is where a send's records are put together.
	batch []simclient.KeyValue
}

// producerLane is one partition a producer writes, and what its loop of
// sends and thinks runs: made once per lane, where each send made two
// closures.
type producerLane struct {
	run       *run
	driver    *producerDriver
	partition history.TopicPartition
	sent      func(simclient.SendResult) // thinkAfterSend, made once
}

// loops is how many loops of sends each lane keeps going: as many as
// the producer keeps in flight per partition.
func (d *producerDriver) loops() int { return max(1, d.settings.InFlight) }

// addLane adds a partition for the producer to write.
func (d *producerDriver) addLane(r *run, tp history.TopicPartition) *producerLane {
	l := &producerLane{run: r, driver: d, partition: tp}
	l.sent = l.thinkAfterSend
	d.partitions = append(d.partitions, tp)
	d.lanes = append(d.lanes, l)
	return l
}

// thinkAfterSend has the lane think once a send is done, then send again.
func (l *producerLane) thinkAfterSend(simclient.SendResult) {
	r := l.run
	// A lane with several loops of sends (InFlight) thinks as many times
	// longer: it sends at the same rate, and its sends overlap where they
	// wait, on a fault, which is where the window of batches in flight
	// matters.
	loops := time.Duration(l.driver.loops())
	think := kernel.Between(r.rng, thinkMin, max(thinkMin, r.scenario.Timeouts.Think*loops))
	l.driver.client.AfterAction(think, "workload.think", l)
}

// Run is the end of the lane's think (kernel.Action): it sends again.
func (l *producerLane) Run() { l.run.sendNext(l) }

// readerDriver is one reader and its client.
type readerDriver struct {
	client *simclient.Client
	reader *simclient.Reader
}

// groupDriver is one consumer group's members.
type groupDriver struct {
	settings scenario.Group
	members  []*memberDriver
}

// memberDriver is one group consumer and its client.
type memberDriver struct {
	name     string
	client   *simclient.Client
	consumer *simclient.GroupConsumer
}

// Client settings the scenario does not vary.
const (
	// verifyCommitChance is the chance a consumer reads its commits
	// back, which the committed-offset linearizability check feeds on.
	verifyCommitChance = 0.2
	// keysPerProducer is how many keys a producer's values cycle over.
	keysPerProducer = 8
	// consumerRetryBackoff is the group consumers' retry.backoff.ms.
	// While the group coordinator moves, a consumer retries its commit
	// each backoff and each retry's outcome is unknown; the
	// committed-offset check's search doubles with every unknown commit
	// (see settleUnreadUnknownCommits), so retries come no faster than
	// this.
	consumerRetryBackoff = 250 * time.Millisecond
)

// producerKeys are the keys values cycle over: "k0" to "k7".
var producerKeys = func() (keys [keysPerProducer]string) {
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	return keys
}()

// groupMetadataMaxAge is the group consumers' metadata.max.age.ms when
// their topic grows during the run: how soon the group's leader notices.
// Kafka's five minutes would outlast the run.
const groupMetadataMaxAge = time.Second

// groupMetadataMaxAge is metadata.max.age.ms for a group on topic:
// groupMetadataMaxAge if the topic grows, else the client's default
// (Kafka's), which a run never reaches, so that the leader's refreshes
// cost nothing where there is nothing for them to find.
func (r *run) groupMetadataMaxAge(topic string) time.Duration {
	if t, _ := r.scenario.Topic(topic); t.GrowTo != 0 {
		return groupMetadataMaxAge
	}
	return 0
}

// newClient attaches a client machine to the network.
func (r *run) newClient(name string) *simclient.Client {
	return simclient.New(r.kernel, r.network, simclient.Config{
		Name:           name,
		ClientID:       name,
		Bootstrap:      r.nodeAddresses(),
		RequestTimeout: r.scenario.Timeouts.Request,
		Codecs:         r.codecs,
	})
}

// startClients builds every producer, reader and group consumer of the
// scenario and sets them going.
func (r *run) startClients() {
	s := r.scenario
	t := s.Timeouts
	for _, ps := range s.Clients.Producers {
		c := r.newClient(ps.Name)
		d := &producerDriver{settings: ps, client: c}
		d.producer = simclient.NewProducer(c, simclient.ProducerConfig{
			Acks:            ps.Acks,
			Idempotent:      ps.Idempotent,
			DeliveryTimeout: t.Delivery,
			ProduceTimeout:  t.ProduceWait,
			Linger:          ps.Linger,
			Compression:     ps.Compression,
			InFlightMax:     ps.InFlight,
		}, r.recorder, r.processes)
		if ps.BatchMax > 1 {
			d.batchRNG = kernel.NewRand(s.Seed, "workload/batching/"+ps.Name)
		}
		for _, p := range s.PartitionsOf(ps.Topic, ps.Partitions) {
			d.addLane(r, history.TopicPartition{Topic: ps.Topic, Partition: p})
		}
		c.OnRestart(func() { r.drive(d) })
		r.producers = append(r.producers, d)
		r.clients = append(r.clients, c)
		r.drive(d)
	}
	for _, rs := range s.Clients.Readers {
		c := r.newClient(rs.Name)
		reader := simclient.NewReader(c, simclient.ReaderConfig{FetchMaxWait: t.FetchWait}, r.recorder, r.processes)
		var assigned []history.TopicPartition
		for _, p := range s.PartitionsOf(rs.Topic, rs.Partitions) {
			assigned = append(assigned, history.TopicPartition{Topic: rs.Topic, Partition: p})
		}
		if err := reader.Assign(assigned); err != nil {
			panic(fmt.Sprintf("clusterworkload: assign %s: %v", rs.Name, err))
		}
		r.readers = append(r.readers, &readerDriver{client: c, reader: reader})
		r.clients = append(r.clients, c)
	}
	for _, gs := range s.Clients.Groups {
		g := &groupDriver{settings: gs}
		for i := 1; i <= gs.Members; i++ {
			name := gs.MemberName(i)
			c := r.newClient(name)
			assignors := memberAssignors(gs.Balancer, i)
			instance := ""
			if gs.Static {
				instance = name
			}
			consumer := simclient.NewGroupConsumer(c, simclient.GroupConsumerConfig{
				Group:              gs.Name,
				InstanceID:         instance,
				Topic:              gs.Topic,
				Assignors:          assignors,
				SessionTimeout:     t.GroupSession,
				RebalanceTimeout:   t.GroupRebalance,
				FetchConfig:        simclient.FetchConfig{FetchMaxWait: t.FetchWait, RetryBackoff: consumerRetryBackoff},
				VerifyCommitChance: verifyCommitChance,
				MetadataMaxAge:     r.groupMetadataMaxAge(gs.Topic),
			}, r.recorder, r.processes)
			consumer.Start()
			g.members = append(g.members, &memberDriver{name: name, client: c, consumer: consumer})
			r.clients = append(r.clients, c)
		}
		r.groups = append(r.groups, g)
		r.startOffsetReaders(gs)
	}
}

// memberAssignors are the assignors member i (from 1) of a group with the
// balancer offers, most preferred first (see scenario.Balancer).
func memberAssignors(balancer scenario.Balancer, i int) []string {
	switch {
	case balancer == scenario.BalancerCooperative, balancer == scenario.BalancerUpgrade && i%2 == 0:
		return []string{simclient.AssignorCooperativeSticky}
	case balancer == scenario.BalancerUpgrade:
		return []string{simclient.AssignorCooperativeSticky, simclient.AssignorRange}
	case i%2 == 0:
		return []string{simclient.AssignorRoundRobin, simclient.AssignorRange}
	}
	return []string{simclient.AssignorRange, simclient.AssignorRoundRobin}
}

// drive starts every lane of a producer: as many loops of sends a lane
// as the producer keeps in flight.
func (r *run) drive(d *producerDriver) {
	for range d.loops() {
		for _, l := range d.lanes {
			r.sendNext(l)
		}
	}
}

// sendNext sends the lane's next values, as many as the send's batch
// carries; when it is done, the lane thinks and sends again, until the
// liveness phase stops new sends. Its events belong to the client's
// process, so a client crash stops the lane until the restart starts it
// again.
func (r *run) sendNext(l *producerLane) {
	d, tp := l.driver, l.partition
	if r.stopSending || !d.client.Alive() || !d.producer.HasRoom(tp) {
		return
	}
	records := 1
	if d.batchRNG != nil {
		records += d.batchRNG.IntN(d.settings.BatchMax)
	}
	d.batch = d.batch[:0]
	for range records {
		// Concatenated, not formatted (Sprintf boxes the number): a
		// value per record.
		value := d.settings.Name + "-" + strconv.Itoa(d.next)
		d.batch = append(d.batch, simclient.KeyValue{Key: producerKeys[d.next%keysPerProducer], Value: value})
		d.next++
	}
	err := d.producer.SendBatch(tp, d.batch, l.sent)
	if err != nil {
		panic(fmt.Sprintf("clusterworkload: send %s: %v", d.batch[0].Value, err))
	}
}

// thinkMin keeps a lane from sending in a busy loop when Think is tiny.
const thinkMin = time.Millisecond
