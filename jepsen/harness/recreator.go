package harness

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
)

// recreator is an operator deleting a topic of its own and creating it
// again under the same name (Workload.RecreateEvery), while the nemesis
// kills, pauses and cuts the nodes: the simulator's recreated topic
// (sim/clusterworkload/recreates.go) on the real binary. Each incarnation
// gets one acks=all write per partition, read back by topic id; then,
// every RecreateEvery, the operator deletes the incarnation by its id
// (DeleteTopics v6: a by-name request that timed out could reach the
// controller after the next incarnation exists, and delete that) and
// creates the topic again.
//
// While an incarnation is current its leader must serve nothing
// acknowledged to a deleted one (read back whole, by topic id, before the
// incarnation is deleted), nor may any node's copy that names the
// incarnation's id in its partition.metadata hold such a record. After the run, every replica of the last
// incarnation (its segment files, in each node's data folder) must hold
// nothing acknowledged to a deleted incarnation, and the leader must
// serve every write confirmed in the last one at its offset (check).
type recreator struct {
	client     *kgo.Client
	admin      *kadm.Client
	cluster    *Cluster
	topic      string
	partitions int32
	rf         int16
	configs    map[string]*string
	every      time.Duration
	background

	mutex sync.Mutex
	// served are what reads of incarnations as they were current found
	// that was acknowledged to a deleted one.
	served      []string
	incarnation int
	id          [16]byte
	deleted     [][16]byte
	// deleting: a deletion of the current incarnation was stopped
	// before an answer (deleteIncarnation).
	deleting  bool
	writes    []recreatedWrite
	recreated atomic.Int64
	// copiesRead counts the nodes' copies of incarnations read on disk
	// while they were current (readIncarnation).
	copiesRead atomic.Int64
}

// recreatedWrite is one value the operator sent to one incarnation.
type recreatedWrite struct {
	value       string
	incarnation int
	partition   int32
	offset      int64
	// acked: a leader acknowledged it (maybe a broker still on an older
	// incarnation: Produce names topics by name); confirmed: a Fetch by
	// the incarnation's id found it at offset.
	acked, confirmed bool
}

// recreatedTopicSuffix names the operator's topic after the workload's.
const recreatedTopicSuffix = "-scratch"

// recreatorConfirmAttempts bounds the reads that confirm one write.
const recreatorConfirmAttempts = 4

// recreatorCheckAttempts bounds the final check's reads of one partition:
// after the heal a leader may still move (the answer is NOT_LEADER, or a
// leaderless metadata) before the read lands; a partition still
// unreadable after them is a problem.
const recreatorCheckAttempts = 25

func newRecreator(cluster *Cluster, w Workload) (*recreator, error) {
	client, err := kgo.NewClient(cluster.ClientOptions()...)
	if err != nil {
		return nil, fmt.Errorf("harness: recreator: %w", err)
	}
	minInsync := fmt.Sprint(w.MinInsyncReplicas)
	return &recreator{
		client: client, admin: kadm.NewClient(client), cluster: cluster,
		topic: w.Topic + recreatedTopicSuffix, partitions: min(w.Partitions, 3), rf: w.ReplicationFactor,
		configs: map[string]*string{"min.insync.replicas": &minInsync}, every: w.RecreateEvery,
	}, nil
}

func (c *recreator) start(ctx context.Context) { c.background.start(ctx, c.run) }

// run creates, writes and deletes incarnations until ctx ends. Every step
// is retried until it succeeds or ctx ends: the faults are at work.
func (c *recreator) run(ctx context.Context) {
	for ctx.Err() == nil {
		if !c.createAndLearn(ctx) {
			return
		}
		c.writeIncarnation(ctx)
		c.readIncarnation(ctx)
		if !sleep(ctx, c.every) || !c.deleteIncarnation(ctx) {
			return
		}
	}
}

// createAndLearn creates the topic (unless it exists) and learns the
// incarnation's id: one no deletion took, every partition led. A
// TOPIC_ALREADY_EXISTS may come from an earlier attempt whose answer was
// lost, or from a deposed controller that has not noticed the deletion:
// Metadata settles which.
func (c *recreator) createAndLearn(ctx context.Context) bool {
	for {
		if id, ok := c.describe(ctx); ok {
			c.mutex.Lock()
			c.incarnation++
			c.id = id
			c.mutex.Unlock()
			if c.incarnation > 1 {
				c.recreated.Add(1)
			}
			return true
		}
		requestContext, cancel := context.WithTimeout(ctx, adminRequestTimeout)
		_, _ = c.admin.CreateTopic(requestContext, c.partitions, c.rf, c.configs, c.topic)
		cancel()
		if !sleep(ctx, adminRetryDelay) {
			return false
		}
	}
}

// describe returns the topic's id if Metadata shows an incarnation no
// deletion took, with every partition led.
func (c *recreator) describe(ctx context.Context) ([16]byte, bool) {
	requestContext, cancel := context.WithTimeout(ctx, adminRequestTimeout)
	defer cancel()
	topics, err := c.admin.ListTopics(requestContext, c.topic)
	if err != nil {
		return [16]byte{}, false
	}
	t, exists := topics[c.topic]
	c.mutex.Lock()
	deleted := slices.Contains(c.deleted, [16]byte(t.ID))
	c.mutex.Unlock()
	if !exists || t.Err != nil || deleted || int32(len(t.Partitions)) != c.partitions {
		return [16]byte{}, false
	}
	for _, p := range t.Partitions {
		if p.Err != nil || p.Leader < 0 {
			return [16]byte{}, false
		}
	}
	return [16]byte(t.ID), true
}

// writeIncarnation writes one value to each partition and reads each
// acknowledged one back by topic id. Each incarnation gets a producer of
// its own: franz-go fails the records of a topic whose id changed under
// it (UNKNOWN_TOPIC_ID), which is what a re-creation does.
func (c *recreator) writeIncarnation(ctx context.Context) {
	producer, err := kgo.NewClient(c.cluster.ClientOptions(kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RecordDeliveryTimeout(adminRequestTimeout))...)
	if err != nil {
		return
	}
	defer producer.Close()
	for partition := range c.partitions {
		c.mutex.Lock()
		w := recreatedWrite{value: fmt.Sprintf("%s/%d/%d/%d", c.topic, c.incarnation, partition, len(c.writes)), incarnation: c.incarnation, partition: partition}
		index := len(c.writes)
		c.writes = append(c.writes, w)
		c.mutex.Unlock()
		produced := producer.ProduceSync(ctx, &kgo.Record{Topic: c.topic, Partition: partition, Value: []byte(w.value)})
		record, err := produced.First()
		if err != nil {
			continue
		}
		confirmed := c.confirm(ctx, partition, record.Offset, w.value)
		c.mutex.Lock()
		c.writes[index].acked, c.writes[index].offset, c.writes[index].confirmed = true, record.Offset, confirmed
		c.mutex.Unlock()
	}
}

// confirm reads offset of partition back by the incarnation's topic id.
func (c *recreator) confirm(ctx context.Context, partition int32, offset int64, value string) bool {
	for range recreatorConfirmAttempts {
		values, err := c.fetchByID(ctx, partition, offset)
		if err == nil && len(values) > 0 && values[0].offset == offset {
			return values[0].value == value
		}
		if !sleep(ctx, adminRetryDelay) {
			return false
		}
	}
	return false
}

// readIncarnation reads every partition of the current incarnation from
// its start, by topic id, and keeps any value acknowledged to a deleted
// incarnation that it serves: a node that took a deleted topic's
// directory for the new topic's, and leads it, serves the old records.
//
// Every node's copy is looked at too, on disk, where its partition.metadata
// names the incarnation's id (a directory without the file, or with
// another id, may still be a deleted incarnation's on a node that has not
// applied the deletion yet): a copy that says it is this incarnation's
// must not hold a deleted one's records, even on a follower.
func (c *recreator) readIncarnation(ctx context.Context) {
	c.mutex.Lock()
	id := c.id
	c.mutex.Unlock()
	for partition := range c.partitions {
		var found []string
		if values, err := c.fetchByID(ctx, partition, 0); err == nil {
			found = append(found, c.resurrected(values, fmt.Sprintf("the leader of %s-%d", c.topic, partition))...)
		}
		for _, n := range c.cluster.Nodes() {
			if c.directoryTopicID(n, partition) == id {
				c.copiesRead.Add(1)
				found = append(found, c.resurrected(c.onDisk(n, partition), fmt.Sprintf("node %d's files of %s-%d", n.ID, c.topic, partition))...)
			}
		}
		if len(found) > 0 {
			c.mutex.Lock()
			c.served = append(c.served, found...)
			c.mutex.Unlock()
		}
	}
}

// directoryTopicID is the topic id a node's partition.metadata of
// partition names, or zero when it has none that reads.
func (c *recreator) directoryTopicID(n *Node, partition int32) [16]byte {
	var id [16]byte
	data, err := os.ReadFile(filepath.Join(n.dataDir, fmt.Sprintf("%s-%d", c.topic, partition), "partition.metadata"))
	if err != nil {
		return id
	}
	for line := range strings.Lines(string(data)) {
		if encoded, ok := strings.CutPrefix(strings.TrimSpace(line), "topic_id: "); ok {
			if decoded, err := base64.RawURLEncoding.DecodeString(encoded); err == nil && len(decoded) == len(id) {
				copy(id[:], decoded)
			}
		}
	}
	return id
}

// resurrected describes the values among values that were acknowledged
// to an incarnation before the current one.
func (c *recreator) resurrected(values []fetchedValue, where string) []string {
	c.mutex.Lock()
	defer c.mutex.Unlock()
	var found []string
	for _, v := range values {
		for _, w := range c.writes {
			if w.value == v.value && w.acked && w.incarnation < c.incarnation {
				found = append(found, fmt.Sprintf("deleted-topic-resurrected: %s (incarnation %d) holds %q at offset %d, acknowledged to incarnation %d, deleted",
					where, c.incarnation, v.value, v.offset, w.incarnation))
			}
		}
	}
	return found
}

// fetchedValue is one record a fetch by topic id returned.
type fetchedValue struct {
	offset int64
	value  string
}

// fetchByID reads partition of the current incarnation from offset, from
// its leader, naming the topic by id (Fetch v13 and up).
func (c *recreator) fetchByID(ctx context.Context, partition int32, offset int64) ([]fetchedValue, error) {
	c.mutex.Lock()
	id := c.id
	c.mutex.Unlock()
	requestContext, cancel := context.WithTimeout(ctx, adminRequestTimeout)
	defer cancel()
	topics, err := c.admin.ListTopics(requestContext, c.topic)
	if err != nil {
		return nil, err
	}
	t := topics[c.topic]
	p, led := t.Partitions[partition]
	if [16]byte(t.ID) != id || !led || p.Leader < 0 {
		return nil, fmt.Errorf("%s-%d of topic id %x has no leader in the metadata", c.topic, partition, id)
	}
	req := kmsg.NewPtrFetchRequest()
	req.Version = 13
	req.ReplicaID = -1
	req.MaxBytes = 1 << 20
	rt := kmsg.NewFetchRequestTopic()
	rt.TopicID = id
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = partition, offset, 1<<20
	rp.CurrentLeaderEpoch, rp.LastFetchedEpoch, rp.LogStartOffset = -1, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	// Retriable: the pooled connection to a leader that was killed and
	// restarted is dead, and its first request would fail with EOF.
	resp, err := c.client.Broker(int(p.Leader)).RetriableRequest(requestContext, req)
	if err != nil {
		return nil, err
	}
	fetched := resp.(*kmsg.FetchResponse)
	if len(fetched.Topics) != 1 || len(fetched.Topics[0].Partitions) != 1 {
		return nil, errors.New("a fetch answer without the partition")
	}
	answer := fetched.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(answer.ErrorCode); err != nil {
		return nil, err
	}
	var values []fetchedValue
	for s := (batch.Scanner{Buf: answer.RecordBatches}); s.Next(); {
		records, err := batch.Records(s.Batch())
		if err != nil {
			return nil, err
		}
		for _, r := range records {
			if at := s.Header().BaseOffset + int64(r.OffsetDelta); at >= offset {
				values = append(values, fetchedValue{offset: at, value: string(r.Value)})
			}
		}
	}
	return values, nil
}

// deleteIncarnation deletes the current incarnation by its id until a
// node answers that it is gone (deleted now, or UNKNOWN_TOPIC_ID after an
// earlier attempt whose answer was lost). Stopped by ctx first, it leaves
// the incarnation marked deleting: a request may have reached the
// controller, and stop finishes the deletion.
func (c *recreator) deleteIncarnation(ctx context.Context) bool {
	c.mutex.Lock()
	id := c.id
	c.mutex.Unlock()
	for {
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.Version = 6
		req.TimeoutMillis = int32(adminRequestTimeout.Milliseconds())
		topic := kmsg.NewDeleteTopicsRequestTopic()
		topic.TopicID = id
		req.Topics = append(req.Topics, topic)
		requestContext, cancel := context.WithTimeout(ctx, adminRequestTimeout)
		resp, err := req.RequestWith(requestContext, c.client)
		cancel()
		if err == nil && len(resp.Topics) == 1 {
			if code := resp.Topics[0].ErrorCode; code == 0 || code == kerr.UnknownTopicID.Code {
				c.mutex.Lock()
				c.deleted = append(c.deleted, id)
				c.deleting = false
				c.mutex.Unlock()
				return true
			}
		}
		if !sleep(ctx, adminRetryDelay) {
			c.mutex.Lock()
			c.deleting = true
			c.mutex.Unlock()
			return false
		}
	}
}

// stop ends the operator and, once the cluster has healed, makes sure the
// last incarnation exists: a run stopped between a deletion and a
// creation creates it now, within timeout; one stopped during a deletion
// whose answer never came (the request may still take effect) finishes
// the deletion first.
func (c *recreator) stop(timeout time.Duration) error {
	c.wait()
	c.mutex.Lock()
	current := c.incarnation > 0 && !slices.Contains(c.deleted, c.id)
	deleting := c.deleting
	c.mutex.Unlock()
	if current && !deleting {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if current && !c.deleteIncarnation(ctx) {
		return fmt.Errorf("the operator's topic %s: a deletion whose answer was lost was not finished within %v", c.topic, timeout)
	}
	if !c.createAndLearn(ctx) {
		return fmt.Errorf("the operator's topic %s was not created again within %v", c.topic, timeout)
	}
	return nil
}

// check judges the last incarnation: the leader must serve every write
// confirmed in it, and no replica's segment files may hold a value
// acknowledged to a deleted incarnation. It returns the problems found.
func (c *recreator) check(ctx context.Context) []string {
	c.mutex.Lock()
	problems := slices.Clone(c.served)
	writes := slices.Clone(c.writes)
	last := c.incarnation
	c.mutex.Unlock()
	for partition := range c.partitions {
		values, err := c.fetchAfterHeal(ctx, partition)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s-%d: reading the last incarnation: %v", c.topic, partition, err))
			continue
		}
		served := map[string]int64{}
		for _, v := range values {
			served[v.value] = v.offset
		}
		for _, w := range writes {
			if w.incarnation == last && w.partition == partition && w.confirmed {
				if at, found := served[w.value]; !found || at != w.offset {
					problems = append(problems, fmt.Sprintf("recreated-topic-write-lost: %s-%d lacks %q, confirmed at offset %d", c.topic, partition, w.value, w.offset))
				}
			}
		}
		problems = append(problems, c.resurrected(values, fmt.Sprintf("the leader of %s-%d", c.topic, partition))...)
		for _, n := range c.cluster.Nodes() {
			problems = append(problems, c.resurrected(c.onDisk(n, partition), fmt.Sprintf("node %d's files of %s-%d", n.ID, c.topic, partition))...)
		}
	}
	return problems
}

// fetchAfterHeal reads partition of the last incarnation from its start,
// retrying within recreatorCheckAttempts; it returns the last error.
func (c *recreator) fetchAfterHeal(ctx context.Context, partition int32) ([]fetchedValue, error) {
	var err error
	for range recreatorCheckAttempts {
		var values []fetchedValue
		if values, err = c.fetchByID(ctx, partition, 0); err == nil {
			return values, nil
		}
		if !sleep(ctx, adminRetryDelay) {
			break
		}
	}
	return nil, err
}

// onDisk reads the values in a node's segment files of partition, as an
// operator would look at them; a node that hosts no replica has none.
func (c *recreator) onDisk(n *Node, partition int32) []fetchedValue {
	dir := filepath.Join(n.dataDir, fmt.Sprintf("%s-%d", c.topic, partition))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".log") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var values []fetchedValue
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		for s := (batch.Scanner{Buf: data}); s.Next(); {
			records, err := batch.Records(s.Batch())
			if err != nil {
				break
			}
			for _, r := range records {
				values = append(values, fetchedValue{offset: s.Header().BaseOffset + int64(r.OffsetDelta), value: string(r.Value)})
			}
		}
	}
	return values
}

// counts are the operator's incarnations created after the first, writes,
// those acknowledged and those confirmed.
func (c *recreator) counts() (recreated, writes, acked, confirmed int) {
	c.mutex.Lock()
	defer c.mutex.Unlock()
	for _, w := range c.writes {
		writes++
		if w.acked {
			acked++
		}
		if w.confirmed {
			confirmed++
		}
	}
	return int(c.recreated.Load()), writes, acked, confirmed
}
