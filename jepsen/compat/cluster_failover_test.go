package compat

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"sluice/jepsen/harness"
)

// The cluster tests (issue 6): real clients against a 3-node cluster the
// test starts (jepsen/harness's launcher, ports of its own), while the
// test kill -9s a partition's leader or a group's coordinator.

const (
	failoverPartitions = 3
	// failoverSenders is how many goroutines of one client send at once,
	// each waiting for an answer before its next send.
	failoverSenders = 4
	// ackedBeforeLeaderKill and ackedAfterLeaderKill are the
	// acknowledgements collected before the kill and after it (at least
	// one of them from the killed leader's partition, so its new leader
	// took writes).
	ackedBeforeLeaderKill = 300
	ackedAfterLeaderKill  = 300
	// failoverWaitMax bounds each phase: the cluster fences a dead node
	// after its session timeout (4 s in the harness) and elects anew.
	failoverWaitMax = 90 * time.Second
	// groupRecordsPerPhase are produced before and after the
	// coordinator's death.
	groupRecordsPerPhase = 300
)

// failoverSteps are the rows the cluster tests add to the client matrix.
const (
	failoverStep = "cluster: acks=all across a leader's kill -9, each ack read once, in order"
	groupStep    = "cluster: group consumes on after its coordinator's kill -9"
)

// startCompatCluster starts a 3-node cluster for one test, stopped when
// the test ends; a failed test prints the end of each node's log.
func startCompatCluster(t *testing.T) *harness.Cluster {
	t.Helper()
	return startCompatClusterOf(t, 3)
}

// startCompatClusterOf is startCompatCluster with nodes nodes.
func startCompatClusterOf(t *testing.T, nodes int) *harness.Cluster {
	t.Helper()
	return startCompatClusterIn(t, nodes, t.TempDir())
}

// startCompatClusterIn is startCompatClusterOf with the nodes' files in
// dir: node i's data directory is dir/node-i (harness.ClusterOptions).
func startCompatClusterIn(t *testing.T, nodes int, dir string) *harness.Cluster {
	t.Helper()
	if testing.Short() {
		t.Skipf("starts a %d-node cluster", nodes)
	}
	ctx, cancel := context.WithTimeout(context.Background(), failoverWaitMax)
	defer cancel()
	cluster, err := harness.StartCluster(ctx, harness.ClusterOptions{Binary: BuildBinary(t), Nodes: nodes, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cluster.Close(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			for _, n := range cluster.Nodes() {
				t.Logf("node %d log (end):\n%s", n.ID, n.LogTail(8<<10))
			}
		}
	})
	return cluster
}

// createClusterTopic creates an RF=3, min.insync.replicas=2 topic and
// waits until every partition has a full ISR.
func createClusterTopic(t *testing.T, cluster *harness.Cluster, topic string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failoverWaitMax)
	defer cancel()
	client, err := kgo.NewClient(cluster.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if _, err := harness.CreateTopic(ctx, client, topic, failoverPartitions, 3, map[string]string{"min.insync.replicas": "2"}); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitHealthy(ctx, failoverWaitMax, topic); err != nil {
		t.Fatal(err)
	}
}

// failoverSender is one client's producer: send writes value with
// acks=all and returns the partition and offset the broker acknowledged.
// It is called from several goroutines at once.
type failoverSender interface {
	send(ctx context.Context, value string) (partition int32, offset int64, err error)
	close()
}

// TestClusterFailoverProducers: kgo, sarama and kafka-go each produce with
// acks=all to an RF=3 topic (min.insync.replicas=2) of a 3-node cluster
// while the test kill -9s the leader of partition 0, then restarts it.
// Every acknowledged record must be read back exactly once, at the offset
// it was acknowledged at, and each sender's records in the order it sent
// them; no record may appear twice. kgo and sarama are idempotent; the
// kafka-go Writer cannot be and does not retry (MaxAttempts 1), so none of
// its records can be written twice either.
func TestClusterFailoverProducers(t *testing.T) {
	cluster := startCompatCluster(t)
	for _, client := range []struct {
		name string
		open func(t *testing.T, bootstrap []string, topic string) failoverSender
	}{
		{"franz-go", openKgoSender},
		{"sarama", openSaramaSender},
		{"kafka-go", openKafkaGoSender},
	} {
		t.Run(client.name, func(t *testing.T) {
			newClientSteps(t, client.name).step(failoverStep, false, func(t *testing.T) {
				topic := "failover-" + client.name
				createClusterTopic(t, cluster, topic)
				sender := client.open(t, cluster.Bootstrap(), topic)
				runLeaderFailover(t, cluster, topic, client.name, sender)
			})
		})
	}
}

// acked is one acknowledged record.
type acked struct {
	sender    int
	sequence  int
	partition int32
	offset    int64
}

// ackLedger collects acknowledgements from the senders.
type ackLedger struct {
	mutex   sync.Mutex
	acks    map[string]acked
	sent    map[string]bool
	errors  map[string]int
	changed chan struct{}
	// killedAt counts the acks before the kill; afterKill counts acks of
	// the killed leader's partition after it.
	killed         bool
	killedAt       int
	killedLeaderOf int32
	afterKill      int
}

func (l *ackLedger) record(value string, a acked, err error) {
	l.mutex.Lock()
	defer l.mutex.Unlock()
	if err != nil {
		l.errors[err.Error()]++
		return
	}
	l.acks[value] = a
	if l.killed && a.partition == l.killedLeaderOf {
		l.afterKill++
	}
	close(l.changed)
	l.changed = make(chan struct{})
}

// errorsShownMax bounds the distinct send errors a log line names.
const errorsShownMax = 3

// errorSummary counts the failed sends and names a few distinct errors.
// The caller holds the mutex.
func (l *ackLedger) errorSummary() string {
	total := 0
	for _, n := range l.errors {
		total += n
	}
	if total == 0 {
		return "no send failed"
	}
	names := slices.Sorted(maps.Keys(l.errors))
	return fmt.Sprintf("%d sends failed, with %d distinct errors, e.g. %q", total, len(names), names[:min(len(names), errorsShownMax)])
}

// waitFor waits until done holds, checking at every acknowledgement.
func (l *ackLedger) waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.NewTimer(failoverWaitMax)
	defer deadline.Stop()
	for {
		l.mutex.Lock()
		ok, changed := done(), l.changed
		summary := fmt.Sprintf("%d acks, %d of partition %d after the kill; %s", len(l.acks), l.afterKill, l.killedLeaderOf, l.errorSummary())
		l.mutex.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("waited %v for %s: %s", failoverWaitMax, what, summary)
		}
	}
}

func runLeaderFailover(t *testing.T, cluster *harness.Cluster, topic, name string, sender failoverSender) {
	ledger := &ackLedger{acks: map[string]acked{}, sent: map[string]bool{}, errors: map[string]int{}, changed: make(chan struct{})}
	ctx, stop := context.WithCancel(context.Background())
	var senders sync.WaitGroup
	for s := range failoverSenders {
		senders.Add(1)
		go func() {
			defer senders.Done()
			for sequence := 0; ctx.Err() == nil; sequence++ {
				value := fmt.Sprintf("%s-%d-%06d", name, s, sequence)
				ledger.mutex.Lock()
				ledger.sent[value] = true
				ledger.mutex.Unlock()
				partition, offset, err := sender.send(ctx, value)
				ledger.record(value, acked{sender: s, sequence: sequence, partition: partition, offset: offset}, err)
			}
		}()
	}
	stopped := false
	stopSending := func() {
		if !stopped {
			stopped = true
			stop()
			senders.Wait()
			sender.close()
		}
	}
	defer stopSending()

	ledger.waitFor(t, "acknowledgements before the kill", func() bool { return len(ledger.acks) >= ackedBeforeLeaderKill })
	leader := cluster.Leaders(topic)[0]
	if leader < 1 {
		t.Fatalf("partition 0 of %s has no leader", topic)
	}
	ledger.mutex.Lock()
	ledger.killed, ledger.killedAt, ledger.killedLeaderOf = true, len(ledger.acks), 0
	ledger.mutex.Unlock()
	if err := cluster.Node(int(leader)).Kill(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: killed node %d, the leader of %s-0, after %d acks", name, leader, topic, ackedBeforeLeaderKill)
	ledger.waitFor(t, "acknowledgements after the kill, some from the new leader of partition 0", func() bool {
		return len(ledger.acks) >= ledger.killedAt+ackedAfterLeaderKill && ledger.afterKill > 0
	})
	if err := cluster.Node(int(leader)).Start(); err != nil {
		t.Fatal(err)
	}
	healthy, cancel := context.WithTimeout(context.Background(), failoverWaitMax)
	defer cancel()
	if err := cluster.WaitHealthy(healthy, failoverWaitMax, topic); err != nil {
		t.Fatalf("after restarting node %d: %v", leader, err)
	}
	stopSending()

	read := readAllWithKgo(t, cluster.ClientOptions(), topic)
	ledger.mutex.Lock()
	defer ledger.mutex.Unlock()
	t.Logf("%s: %d sent, %d acknowledged, %d read back; %s", name, len(ledger.sent), len(ledger.acks), len(read), ledger.errorSummary())
	reportProblems(t, "acknowledged records", checkFailoverReads(ledger.acks, ledger.sent, read))
}

// readRecord is one record read back.
type readRecord struct {
	partition int32
	offset    int64
}

// readAllWithKgo reads every partition of topic from the start to its end
// offset, and returns where each value was read (every place, if twice).
func readAllWithKgo(t *testing.T, options []kgo.Opt, topic string) map[string][]readRecord {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failoverWaitMax)
	defer cancel()
	admin, err := kgo.NewClient(options...)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	ends, err := kadm.NewClient(admin).ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatalf("ListEndOffsets: %v", err)
	}
	remaining := 0
	offsets := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) {
		remaining += int(o.Offset)
		offsets[o.Partition] = kgo.NewOffset().AtStart()
	})
	consumer, err := kgo.NewClient(append(slices.Clone(options), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer consumer.Close()
	read := map[string][]readRecord{}
	for remaining > 0 {
		fetches := consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading back: %d records short of the end offsets", remaining)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			read[string(r.Value)] = append(read[string(r.Value)], readRecord{partition: r.Partition, offset: r.Offset})
			remaining--
		})
	}
	return read
}

// checkFailoverReads: every acknowledged value read exactly once, where
// it was acknowledged; nothing read twice or never sent; each sender's
// acknowledged values in one partition in the order it sent them.
func checkFailoverReads(acks map[string]acked, sent map[string]bool, read map[string][]readRecord) problems {
	var found problems
	for _, value := range slices.Sorted(maps.Keys(acks)) {
		a := acks[value]
		places := read[value]
		switch {
		case len(places) == 0:
			found.add("acknowledged %q (partition %d, offset %d) was not read back", value, a.partition, a.offset)
		case len(places) > 1:
			found.add("acknowledged %q was read %d times: %v", value, len(places), places)
		case places[0].partition != a.partition || (a.offset >= 0 && places[0].offset != a.offset):
			found.add("%q was acknowledged at %d/%d but read at %d/%d", value, a.partition, a.offset, places[0].partition, places[0].offset)
		}
	}
	for _, value := range slices.Sorted(maps.Keys(read)) {
		if !sent[value] {
			found.add("read %q, which was never sent", value)
		} else if _, wasAcked := acks[value]; !wasAcked && len(read[value]) > 1 {
			found.add("unacknowledged %q was read %d times", value, len(read[value]))
		}
	}
	type lane struct {
		sender    int
		partition int32
	}
	last := map[lane]acked{}
	lastOffset := map[lane]int64{}
	for _, value := range slices.SortedFunc(maps.Keys(acks), func(a, b string) int { return acks[a].sequence - acks[b].sequence }) {
		a := acks[value]
		if len(read[value]) != 1 {
			continue
		}
		key := lane{a.sender, a.partition}
		offset := read[value][0].offset
		if previous, seen := last[key]; seen && offset <= lastOffset[key] {
			found.add("sender %d's record %d is at offset %d of partition %d, before its record %d at %d",
				a.sender, a.sequence, offset, a.partition, previous.sequence, lastOffset[key])
		}
		last[key], lastOffset[key] = a, offset
	}
	return found
}

// kgoSender: kgo's defaults (idempotent, acks=all), round-robin over
// partitions.
type kgoSender struct{ client *kgo.Client }

func openKgoSender(t *testing.T, bootstrap []string, topic string) failoverSender {
	client, err := kgo.NewClient(kgo.SeedBrokers(bootstrap...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.MetadataMinAge(250*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return &kgoSender{client: client}
}

func (s *kgoSender) send(ctx context.Context, value string) (int32, int64, error) {
	r := &kgo.Record{Value: []byte(value)}
	err := s.client.ProduceSync(context.WithoutCancel(ctx), r).FirstErr()
	return r.Partition, r.Offset, err
}

func (s *kgoSender) close() { s.client.Close() }

// saramaSender: an idempotent SyncProducer (acks=all, one request in
// flight), round-robin over partitions.
type saramaSender struct {
	producer sarama.SyncProducer
	topic    string
}

func openSaramaSender(t *testing.T, bootstrap []string, topic string) failoverSender {
	config := saramaConfig(sarama.CompressionNone)
	config.Producer.Partitioner = sarama.NewRoundRobinPartitioner
	config.Producer.Retry.Max = 100
	config.Metadata.Retry.Backoff = 100 * time.Millisecond
	producer, err := sarama.NewSyncProducer(bootstrap, config)
	if err != nil {
		t.Fatal(err)
	}
	return &saramaSender{producer: producer, topic: topic}
}

func (s *saramaSender) send(_ context.Context, value string) (int32, int64, error) {
	return s.producer.SendMessage(&sarama.ProducerMessage{Topic: s.topic, Value: sarama.StringEncoder(value)})
}

func (s *saramaSender) close() { _ = s.producer.Close() }

// kafkaGoSender: a Writer with acks=all, one attempt per message (it has
// no idempotence, so a retry could write twice), round-robin over
// partitions. The Completion callback says where each message went.
type kafkaGoSender struct {
	writer *kafka.Writer
	mutex  sync.Mutex
	landed map[string]kafka.Message
}

func openKafkaGoSender(t *testing.T, bootstrap []string, topic string) failoverSender {
	s := &kafkaGoSender{landed: map[string]kafka.Message{}}
	s.writer = &kafka.Writer{
		Addr:         kafka.TCP(bootstrap...),
		Topic:        topic,
		Balancer:     &kafka.RoundRobin{},
		RequiredAcks: kafka.RequireAll,
		MaxAttempts:  1,
		BatchTimeout: kafkaGoBatchTimeout,
		Transport:    &kafka.Transport{MetadataTTL: time.Second},
		Completion: func(messages []kafka.Message, err error) {
			if err != nil {
				return
			}
			s.mutex.Lock()
			defer s.mutex.Unlock()
			for _, m := range messages {
				s.landed[string(m.Value)] = m
			}
		},
	}
	return s
}

func (s *kafkaGoSender) send(ctx context.Context, value string) (int32, int64, error) {
	err := s.writer.WriteMessages(context.WithoutCancel(ctx), kafka.Message{Value: []byte(value)})
	if err != nil {
		return 0, 0, err
	}
	s.mutex.Lock()
	defer s.mutex.Unlock()
	m, ok := s.landed[value]
	if !ok {
		return 0, 0, errors.New("kafka-go acknowledged a write its Completion callback never reported")
	}
	return int32(m.Partition), m.Offset, nil
}

func (s *kafkaGoSender) close() { _ = s.writer.Close() }

// TestClusterGroupCoordinatorFailover: a kgo group member reads a topic's
// first records and commits them; the test kill -9s the node that
// coordinates the group, produces more records, and the member must read
// every one of them and commit past them, through a new coordinator.
func TestClusterGroupCoordinatorFailover(t *testing.T) {
	cluster := startCompatCluster(t)
	steps := newClientSteps(t, "franz-go")
	steps.step(groupStep, false, func(t *testing.T) {
		const topic, group = "failover-group", "failover-group"
		createClusterTopic(t, cluster, topic)
		ctx, cancel := context.WithTimeout(context.Background(), 3*failoverWaitMax)
		defer cancel()
		producer, err := kgo.NewClient(cluster.ClientOptions(kgo.DefaultProduceTopic(topic))...)
		if err != nil {
			t.Fatal(err)
		}
		defer producer.Close()
		produce := func(phase string) {
			for i := range groupRecordsPerPhase {
				producer.Produce(ctx, &kgo.Record{Value: []byte(phase + "-" + strconv.Itoa(i))}, nil)
			}
			if err := producer.Flush(ctx); err != nil {
				t.Fatalf("producing %s: %v", phase, err)
			}
		}
		produce("before")
		member, err := kgo.NewClient(cluster.ClientOptions(kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
			kgo.SessionTimeout(6*time.Second), kgo.HeartbeatInterval(time.Second))...)
		if err != nil {
			t.Fatal(err)
		}
		defer member.Close()
		seen := map[string]int{}
		consumeUntil := func(want int) {
			for len(seen) < want {
				fetches := member.PollFetches(ctx)
				if ctx.Err() != nil {
					t.Fatalf("the member read %d distinct records, want %d", len(seen), want)
				}
				fetches.EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++ })
				if err := member.CommitUncommittedOffsets(ctx); err != nil {
					t.Logf("commit: %v (retried with the next poll)", err)
				}
			}
		}
		consumeUntil(groupRecordsPerPhase)
		admin := kadm.NewClient(producer)
		coordinators := admin.FindGroupCoordinators(ctx, group)
		coordinator, ok := coordinators[group]
		if !ok || coordinator.Err != nil {
			t.Fatalf("FindCoordinator: %+v", coordinators)
		}
		dead := int(coordinator.NodeID)
		if err := cluster.Node(dead).Kill(); err != nil {
			t.Fatal(err)
		}
		t.Logf("killed node %d, the coordinator of group %s", dead, group)
		produce("after")
		consumeUntil(2 * groupRecordsPerPhase)
		for phase, n := range map[string]int{"before": groupRecordsPerPhase, "after": groupRecordsPerPhase} {
			for i := range n {
				if seen[phase+"-"+strconv.Itoa(i)] == 0 {
					t.Errorf("the member never read %s-%d", phase, i)
				}
			}
		}
		// The commits go on too: through the new coordinator, the group's
		// committed offsets reach every partition's end.
		for {
			if err := member.CommitUncommittedOffsets(ctx); err == nil {
				committed, err := admin.FetchOffsets(ctx, group)
				ends, endsErr := admin.ListEndOffsets(ctx, topic)
				if err == nil && endsErr == nil {
					total, end := int64(0), int64(0)
					committed.Each(func(o kadm.OffsetResponse) { total += o.At })
					ends.Each(func(o kadm.ListedOffset) { end += o.Offset })
					if total == end {
						break
					}
				}
			}
			if ctx.Err() != nil {
				t.Fatal("the group's committed offsets never reached the end of the topic after the coordinator died")
			}
			time.Sleep(200 * time.Millisecond)
		}
		now := admin.FindGroupCoordinators(ctx, group)[group]
		if now.Err != nil || int(now.NodeID) == dead {
			t.Errorf("the group's coordinator is %d (%v), still the dead node %d", now.NodeID, now.Err, dead)
		}
		// The dead node comes back and rejoins: it must serve again
		// before the cluster is stopped, or SIGTERM would find it before
		// it listens for signals.
		if err := cluster.Node(dead).Start(); err != nil {
			t.Fatal(err)
		}
		if err := cluster.WaitBrokers(ctx, failoverWaitMax); err != nil {
			t.Fatal(err)
		}
	})
}
