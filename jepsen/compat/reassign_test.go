package compat

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"sluice/jepsen/harness"
)

// The partition reassignment tests (KIP-455; kafka-reassign-partitions.sh)
// on real nodes: kadm's AlterPartitionAssignments and
// ListPartitionReassignments here, `sluice topic reassign` and
// `sluice topic reassignments` in reassign_cli_test.go.

const (
	// reassignNodes: enough that a partition of two replicas can move to
	// two other nodes, and that the metadata quorum outlives one node.
	reassignNodes = 4
	// reassignRecords are produced to each partition before the move,
	// reassignRecordsAfter after it, by the new replicas.
	reassignRecords      = 50
	reassignRecordsAfter = 10
	// reassignTestTimeout bounds each reassignment test, polls included;
	// a healthy run takes a fraction of it.
	reassignTestTimeout = 2 * failoverWaitMax
)

// TestFranzGoPartitionReassignment: four nodes, a topic of two
// partitions on two replicas each, 50 records in each acknowledged by
// both (acks=all). kadm's AlterPartitionAssignments moves partition 0 to
// the two nodes that do not hold it and partition 1 to three replicas,
// one of them new and one of its old ones dropped; the reassignments are
// followed with ListPartitionReassignments until none is left. Then
// every node's Metadata shows exactly the targets, in order, in sync and
// led from within; everything reads back from offset 0 in order, and the
// new replicas take writes; the dropped replicas' directories are gone,
// and a dropped node killed with -9 and restarted does not bring its copy
// back. Requests Kafka refuses are refused alike: cancelling nothing
// (NO_REASSIGNMENT_IN_PROGRESS), a broker that does not exist
// (INVALID_REPLICA_ASSIGNMENT), a size change that v1's
// AllowReplicationFactorChange=false forbids (INVALID_REPLICATION_FACTOR).
func TestFranzGoPartitionReassignment(t *testing.T) {
	dir := t.TempDir()
	cluster := startCompatClusterIn(t, reassignNodes, dir)
	ctx, cancel := context.WithTimeout(context.Background(), reassignTestTimeout)
	defer cancel()
	const topic = "reassigned"
	client, err := kgo.NewClient(cluster.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	admin := kadm.NewClient(client)
	waitFor(ctx, t, cluster, "the topic created", func() bool {
		created, err := admin.CreateTopic(ctx, 2, 2, nil, topic)
		return err == nil && (created.Err == nil || errors.Is(created.Err, kerr.TopicAlreadyExists))
	})
	if err := cluster.WaitHealthy(ctx, failoverWaitMax, topic); err != nil {
		t.Fatal(err)
	}
	before := partitionsSeen(t, cluster, topic)
	for _, p := range []int32{0, 1} {
		if len(before[p].Replicas) != 2 {
			t.Fatalf("created with replication factor 2, partition %d is %v", p, before[p])
		}
	}
	written := map[int32][]string{}
	for _, p := range []int32{0, 1} {
		written[p] = produceNumbered(ctx, t, cluster, topic, p, "before", 0, reassignRecords)
	}

	// Partition 0 moves to the two nodes that do not hold it. Partition 1
	// goes to every node but one of its replicas other than the node that
	// restarts at the end (the first that held partition 0), which so
	// holds a partition again, and proves it is back, by rejoining its
	// ISR.
	restarted := before[0].Replicas[0]
	var target0, target1 []int32
	var dropped1 int32 = -1
	for _, id := range before[1].Replicas {
		if id != restarted {
			dropped1 = id
			break
		}
	}
	for id := int32(1); id <= reassignNodes; id++ {
		if !slices.Contains(before[0].Replicas, id) {
			target0 = append(target0, id)
		}
		if id != dropped1 {
			target1 = append(target1, id)
		}
	}
	t.Logf("partition 0: %v → %v; partition 1: %v → %v", before[0].Replicas, target0, before[1].Replicas, target1)

	// Refused before anything moves: nothing to cancel, a broker that
	// does not exist, and a size change v1 forbids.
	expectReassignError(ctx, t, admin, topic, 0, nil, kerr.NoReassignmentInProgress)
	expectReassignError(ctx, t, admin, topic, 0, []int32{target0[0], 99}, kerr.InvalidReplicaAssignment)
	expectReassignError(kadm.ForbidAlterRf(ctx), t, admin, topic, 1, target1, kerr.InvalidReplicationFactor)
	if listed, err := admin.ListPartitionReassignments(ctx, bothPartitions(topic)); err != nil || len(listed) != 0 {
		t.Fatalf("after refusals only, ListPartitionReassignments answered %+v, %v; want nothing in progress", listed, err)
	}

	req := kadm.AlterPartitionAssignmentsReq{}
	req.Assign(topic, 0, target0)
	req.Assign(topic, 1, target1)
	answers, err := admin.AlterPartitionAssignments(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []int32{0, 1} {
		if a, ok := answers[topic][p]; !ok || a.Err != nil {
			t.Fatalf("partition %d's reassignment: %+v (answered: %v); want it started", p, a, ok)
		}
	}
	waitClusterUntil(ctx, t, cluster, "no reassignment listed", func() error {
		listed, err := admin.ListPartitionReassignments(ctx, bothPartitions(topic))
		if err != nil {
			return err
		}
		for _, l := range listed.Sorted() {
			// Whatever is listed is on its way to the target asked for.
			target := map[int32][]int32{0: target0, 1: target1}[l.Partition]
			if !isSubset(target, l.Replicas) || len(l.Replicas) != len(target)+len(l.RemovingReplicas) {
				t.Fatalf("listed %+v while moving to %v", l, target)
			}
		}
		if len(listed) > 0 {
			return fmt.Errorf("listed: %+v", listed.Sorted())
		}
		return nil
	})
	targets := map[int32][]int32{0: target0, 1: target1}
	waitEveryNodeShows(ctx, t, cluster, topic, targets)

	for _, p := range []int32{0, 1} {
		written[p] = append(written[p], produceNumbered(ctx, t, cluster, topic, p, "after", reassignRecords, reassignRecordsAfter)...)
	}
	checkReadBack(ctx, t, cluster, topic, written)

	// The dropped replicas delete their copies; the new ones hold theirs.
	holders := map[string][]int32{
		partitionDir(topic, 0): target0,
		partitionDir(topic, 1): target1,
	}
	gone := map[string][]int32{
		partitionDir(topic, 0): before[0].Replicas,
		partitionDir(topic, 1): {dropped1},
	}
	waitClusterUntil(ctx, t, cluster, "the dropped replicas' directories deleted", func() error {
		if present := directoriesPresent(dir, gone); len(present) > 0 {
			return fmt.Errorf("still present: %v", present)
		}
		return nil
	})
	if missing := directoriesMissing(dir, holders); len(missing) > 0 {
		t.Fatalf("the new replicas have no directory: %v", missing)
	}

	// A dropped node crashes and comes back: it must not bring its copy
	// of partition 0 back, and it serves partition 1 as before.
	if err := cluster.Node(int(restarted)).Kill(); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Node(int(restarted)).Start(); err != nil {
		t.Fatal(err)
	}
	waitClusterUntil(ctx, t, cluster, fmt.Sprintf("node %d back in partition 1's ISR, as every node sees it", restarted), func() error {
		for _, n := range cluster.Nodes() {
			view, err := cluster.View(n.ID)
			if err != nil {
				return fmt.Errorf("node %d: %w", n.ID, err)
			}
			if len(view.Brokers) != reassignNodes {
				return fmt.Errorf("node %d lists brokers %v", n.ID, view.Brokers)
			}
			for _, p := range view.Partitions {
				if p.Topic == topic && p.Partition == 1 && !slices.Contains(p.ISR, restarted) {
					return fmt.Errorf("node %d shows %v", n.ID, p)
				}
			}
		}
		return nil
	})
	waitEveryNodeShows(ctx, t, cluster, topic, targets)
	written[1] = append(written[1], produceNumbered(ctx, t, cluster, topic, 1, "restarted", reassignRecords+reassignRecordsAfter, reassignRecordsAfter)...)
	checkReadBack(ctx, t, cluster, topic, written)
	if present := directoriesPresent(dir, gone); len(present) > 0 {
		t.Fatalf("after node %d's restart, dropped replicas' directories are back: %v", restarted, present)
	}
	if missing := directoriesMissing(dir, holders); len(missing) > 0 {
		t.Fatalf("after node %d's restart, the replicas have no directory: %v", restarted, missing)
	}

	// Nothing left to cancel; a stale broker id is still refused.
	expectReassignError(ctx, t, admin, topic, 0, nil, kerr.NoReassignmentInProgress)
	expectReassignError(ctx, t, admin, topic, 1, []int32{1, 2, 99}, kerr.InvalidReplicaAssignment)
	waitEveryNodeShows(ctx, t, cluster, topic, targets)
	if exits := cluster.UnexpectedExits(); len(exits) > 0 {
		t.Fatalf("nodes exited on their own: %v", exits)
	}
}

// expectReassignError asks for one partition's reassignment to replicas
// (nil cancels) and fails the test unless it is refused with want.
func expectReassignError(ctx context.Context, t *testing.T, admin *kadm.Client, topic string, partition int32, replicas []int32, want error) {
	t.Helper()
	req := kadm.AlterPartitionAssignmentsReq{}
	req.Assign(topic, partition, replicas)
	answers, err := admin.AlterPartitionAssignments(ctx, req)
	if err != nil {
		t.Fatalf("reassigning %s-%d to %v: %v", topic, partition, replicas, err)
	}
	if a := answers[topic][partition]; !errors.Is(a.Err, want) {
		t.Fatalf("reassigning %s-%d to %v answered %v (%q), want %v", topic, partition, replicas, a.Err, a.ErrMessage, want)
	}
}

func bothPartitions(topic string) kadm.TopicsSet {
	set := kadm.TopicsSet{}
	set.Add(topic, 0, 1)
	return set
}

// partitionsSeen is topic's partitions as the first node that answers
// sees them.
func partitionsSeen(t *testing.T, cluster *harness.Cluster, topic string) map[int32]harness.PartitionView {
	t.Helper()
	for _, n := range cluster.Nodes() {
		if !n.Alive() {
			continue
		}
		view, err := cluster.View(n.ID)
		if err != nil {
			continue
		}
		seen := map[int32]harness.PartitionView{}
		for _, p := range view.Partitions {
			if p.Topic == topic {
				seen[p.Partition] = p
			}
		}
		return seen
	}
	t.Fatal("no node answers Metadata")
	return nil
}

// waitEveryNodeShows waits until every node's Metadata shows each
// partition of targets with exactly its target as replicas, in order,
// all of them in the ISR, and a leader among them.
func waitEveryNodeShows(ctx context.Context, t *testing.T, cluster *harness.Cluster, topic string, targets map[int32][]int32) {
	t.Helper()
	waitClusterUntil(ctx, t, cluster, fmt.Sprintf("every node showing the targets %v", targets), func() error {
		for _, n := range cluster.Nodes() {
			view, err := cluster.View(n.ID)
			if err != nil {
				return fmt.Errorf("node %d: %w", n.ID, err)
			}
			shown := 0
			for _, p := range view.Partitions {
				target, ok := targets[p.Partition]
				if p.Topic != topic || !ok {
					continue
				}
				shown++
				isr := slices.Sorted(slices.Values(p.ISR))
				if p.Error != "" || !slices.Equal(p.Replicas, target) || !slices.Equal(isr, slices.Sorted(slices.Values(target))) || !slices.Contains(target, p.Leader) {
					return fmt.Errorf("node %d shows %v", n.ID, p)
				}
			}
			if shown != len(targets) {
				return fmt.Errorf("node %d shows %d of the partitions", n.ID, shown)
			}
		}
		return nil
	})
}

// waitClusterUntil polls check every 100 ms until it returns nil, failing the
// test with check's last reason at ctx's deadline, or as soon as a node
// exits on its own.
func waitClusterUntil(ctx context.Context, t *testing.T, cluster *harness.Cluster, what string, check func() error) {
	t.Helper()
	for {
		last := check()
		if last == nil {
			return
		}
		if exits := cluster.UnexpectedExits(); len(exits) > 0 {
			t.Fatalf("waiting for %s: nodes exited on their own: %v", what, exits)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v; last: %v", what, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// produceNumbered writes count records to partition with acks=all (kgo's
// default, idempotent), prefix-first..., and checks each landed at the
// offset after the last: first is the partition's end before. It returns
// the values, in order.
func produceNumbered(ctx context.Context, t *testing.T, cluster *harness.Cluster, topic string, partition int32, prefix string, first, count int) []string {
	t.Helper()
	producer, err := kgo.NewClient(cluster.ClientOptions(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	var records []*kgo.Record
	var values []string
	for i := range count {
		value := fmt.Sprintf("%s-p%d-%03d", prefix, partition, first+i)
		values = append(values, value)
		records = append(records, &kgo.Record{Partition: partition, Value: []byte(value)})
	}
	if err := producer.ProduceSync(ctx, records...).FirstErr(); err != nil {
		t.Fatalf("producing %s to %s-%d: %v", prefix, topic, partition, err)
	}
	for i, r := range records {
		if r.Offset != int64(first+i) {
			t.Fatalf("%s landed at %s-%d offset %d, want %d", r.Value, topic, partition, r.Offset, first+i)
		}
	}
	return values
}

// checkReadBack reads every partition of want from offset 0 and checks it
// holds exactly want's values, in order, at offsets 0, 1, ...
func checkReadBack(ctx context.Context, t *testing.T, cluster *harness.Cluster, topic string, want map[int32][]string) {
	t.Helper()
	offsets := map[int32]kgo.Offset{}
	total := 0
	for p, values := range want {
		offsets[p] = kgo.NewOffset().AtStart()
		total += len(values)
	}
	reader, err := kgo.NewClient(cluster.ClientOptions(kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}))...)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	got := map[int32][]string{}
	read := 0
	for read < total {
		fetches := reader.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records: %v", read, total, ctx.Err())
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if r.Offset != int64(len(got[r.Partition])) {
				t.Errorf("%s-%d: record %q at offset %d after %d records", topic, r.Partition, r.Value, r.Offset, len(got[r.Partition]))
			}
			got[r.Partition] = append(got[r.Partition], string(r.Value))
			read++
		})
	}
	for p, values := range want {
		if !slices.Equal(got[p], values) {
			t.Fatalf("%s-%d reads back %d records %q; want %d: %q", topic, p, len(got[p]), got[p], len(values), values)
		}
	}
	if read != total {
		t.Fatalf("read %d records, want %d", read, total)
	}
}

// partitionDir is a partition's directory under a node's data directory.
func partitionDir(topic string, partition int32) string {
	return topic + "-" + strconv.Itoa(int(partition))
}

// nodeDataDir is node id's data directory in a cluster started in dir
// (harness.ClusterOptions.Dir).
func nodeDataDir(dir string, id int32) string {
	return filepath.Join(dir, "node-"+strconv.Itoa(int(id)))
}

// directoriesPresent lists "node N: dir" for each partition directory of
// nodes that exists on that node.
func directoriesPresent(dir string, nodes map[string][]int32) []string {
	var present []string
	for partition, ids := range nodes {
		for _, id := range ids {
			if _, err := os.Stat(filepath.Join(nodeDataDir(dir, id), partition)); !errors.Is(err, os.ErrNotExist) {
				present = append(present, fmt.Sprintf("node %d: %s (%v)", id, partition, err))
			}
		}
	}
	slices.Sort(present)
	return present
}

// directoriesMissing lists "node N: dir" for each partition directory of
// nodes that is not a directory on that node.
func directoriesMissing(dir string, nodes map[string][]int32) []string {
	var missing []string
	for partition, ids := range nodes {
		for _, id := range ids {
			if info, err := os.Stat(filepath.Join(nodeDataDir(dir, id), partition)); err != nil || !info.IsDir() {
				missing = append(missing, fmt.Sprintf("node %d: %s (%v)", id, partition, err))
			}
		}
	}
	slices.Sort(missing)
	return missing
}

// isSubset reports whether every id of sub is in set.
func isSubset(sub, set []int32) bool {
	for _, id := range sub {
		if !slices.Contains(set, id) {
			return false
		}
	}
	return true
}

// TestFranzGoReassignmentAwayFromADownNode: a partition on nodes 1 and 2
// moves to nodes 3 and 4 while node 2 is down, and while an idempotent
// producer writes to it with acks=all, one record at a time, through the
// leader's move from node 1 to the target. Every acknowledged record
// reads back once, in order, at consecutive offsets; node 1 deletes its
// copy at once, and node 2, which was down when the reassignment dropped
// it, deletes its copy when it comes back instead of serving it.
func TestFranzGoReassignmentAwayFromADownNode(t *testing.T) {
	dir := t.TempDir()
	cluster := startCompatClusterIn(t, reassignNodes, dir)
	ctx, cancel := context.WithTimeout(context.Background(), reassignTestTimeout)
	defer cancel()
	const topic = "away"
	client, err := kgo.NewClient(cluster.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	admin := kadm.NewClient(client)
	createWithAssignment(ctx, t, cluster, client, topic, [][]int32{{1, 2}})
	if err := cluster.WaitHealthy(ctx, failoverWaitMax, topic); err != nil {
		t.Fatal(err)
	}
	written := produceNumbered(ctx, t, cluster, topic, 0, "before", 0, reassignRecords)
	if err := cluster.Node(2).Kill(); err != nil {
		t.Fatal(err)
	}
	waitClusterUntil(ctx, t, cluster, "node 2 out of the ISR", func() error {
		if p := partitionsSeen(t, cluster, topic)[0]; !slices.Equal(p.ISR, []int32{1}) {
			return fmt.Errorf("%v", p)
		}
		return nil
	})

	writer := startSequentialWriter(ctx, t, cluster, topic, "during", len(written))
	writer.waitAcked(t, 5)
	req := kadm.AlterPartitionAssignmentsReq{}
	req.Assign(topic, 0, []int32{3, 4})
	answers, err := admin.AlterPartitionAssignments(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if a := answers[topic][0]; a.Err != nil {
		t.Fatalf("the reassignment: %v %s", a.Err, a.ErrMessage)
	}
	waitClusterUntil(ctx, t, cluster, "no reassignment listed", func() error {
		listed, err := admin.ListPartitionReassignments(ctx, bothPartitions(topic))
		if err != nil {
			return err
		}
		if len(listed) > 0 {
			return fmt.Errorf("listed: %+v", listed.Sorted())
		}
		return nil
	})
	waitEveryLiveNodeShows(ctx, t, cluster, topic, []int32{3, 4})
	// Some writes after the move, acknowledged by the new replicas.
	writer.waitAcked(t, writer.acked()+10)
	during := writer.stop(t)
	t.Logf("%d records acknowledged while the partition moved and after", len(during))
	written = append(written, during...)
	checkReadBack(ctx, t, cluster, topic, map[int32][]string{0: written})

	here := map[string][]int32{partitionDir(topic, 0): {1}}
	waitClusterUntil(ctx, t, cluster, "node 1's copy deleted", func() error {
		if present := directoriesPresent(dir, here); len(present) > 0 {
			return fmt.Errorf("still present: %v", present)
		}
		return nil
	})
	stranded := map[string][]int32{partitionDir(topic, 0): {2}}
	if present := directoriesPresent(dir, stranded); len(present) != 1 {
		t.Fatalf("node 2, down, holds %v; want its old copy", present)
	}
	if err := cluster.Node(2).Start(); err != nil {
		t.Fatal(err)
	}
	waitClusterUntil(ctx, t, cluster, "node 2's stale copy deleted once it is back", func() error {
		if present := directoriesPresent(dir, stranded); len(present) > 0 {
			return fmt.Errorf("still present: %v", present)
		}
		return nil
	})
	waitEveryNodeShows(ctx, t, cluster, topic, map[int32][]int32{0: {3, 4}})
	if missing := directoriesMissing(dir, map[string][]int32{partitionDir(topic, 0): {3, 4}}); len(missing) > 0 {
		t.Fatalf("the new replicas have no directory: %v", missing)
	}
	checkReadBack(ctx, t, cluster, topic, map[int32][]string{0: written})
	if exits := cluster.UnexpectedExits(); len(exits) > 0 {
		t.Fatalf("nodes exited on their own: %v", exits)
	}
}

// waitEveryLiveNodeShows is waitEveryNodeShows for partition 0 alone, over
// the nodes that run.
func waitEveryLiveNodeShows(ctx context.Context, t *testing.T, cluster *harness.Cluster, topic string, target []int32) {
	t.Helper()
	waitClusterUntil(ctx, t, cluster, fmt.Sprintf("every running node showing %s-0 on %v", topic, target), func() error {
		for _, n := range cluster.Nodes() {
			if !n.Alive() {
				continue
			}
			view, err := cluster.View(n.ID)
			if err != nil {
				return fmt.Errorf("node %d: %w", n.ID, err)
			}
			for _, p := range view.Partitions {
				if p.Topic == topic && p.Partition == 0 &&
					(!slices.Equal(p.Replicas, target) || !slices.Contains(target, p.Leader) || len(p.ISR) != len(target)) {
					return fmt.Errorf("node %d shows %v", n.ID, p)
				}
			}
		}
		return nil
	})
}

// sequentialWriter produces prefix-p0-NNN to partition 0, one record at
// a time, each acknowledged (acks=all, idempotent) before the next, until
// stopped. A send that fails stops it, and fails the test at its next
// wait or stop.
type sequentialWriter struct {
	stopping atomic.Bool
	done     chan struct{}
	mutex    sync.Mutex
	values   []string
	err      error
	changed  chan struct{}
}

func startSequentialWriter(ctx context.Context, t *testing.T, cluster *harness.Cluster, topic, prefix string, first int) *sequentialWriter {
	t.Helper()
	producer, err := kgo.NewClient(cluster.ClientOptions(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	w := &sequentialWriter{done: make(chan struct{}), changed: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer producer.Close()
		// Stopping is checked between sends, never during one, so every
		// record sent is either acknowledged or a failure of the test.
		for i := first; !w.stopping.Load(); i++ {
			value := fmt.Sprintf("%s-p0-%03d", prefix, i)
			record := &kgo.Record{Partition: 0, Value: []byte(value)}
			err := producer.ProduceSync(ctx, record).FirstErr()
			w.mutex.Lock()
			switch {
			case err != nil:
				w.err = fmt.Errorf("producing %s: %w", value, err)
			case record.Offset != int64(i):
				w.err = fmt.Errorf("%s landed at offset %d, want %d", value, record.Offset, i)
			default:
				w.values = append(w.values, value)
			}
			close(w.changed)
			w.changed = make(chan struct{})
			failed := w.err != nil
			w.mutex.Unlock()
			if failed {
				return
			}
		}
	}()
	return w
}

// stop stops the writer after its send in flight and returns the values
// acknowledged, in order.
func (w *sequentialWriter) stop(t *testing.T) []string {
	t.Helper()
	w.stopping.Store(true)
	<-w.done
	if w.err != nil {
		t.Fatal(w.err)
	}
	return slices.Clone(w.values)
}

// acked is how many records have been acknowledged.
func (w *sequentialWriter) acked() int {
	w.mutex.Lock()
	defer w.mutex.Unlock()
	return len(w.values)
}

// waitAcked waits until n records have been acknowledged, failing the
// test if the writer fails first or the wait exceeds failoverWaitMax.
func (w *sequentialWriter) waitAcked(t *testing.T, n int) {
	t.Helper()
	deadline := time.NewTimer(failoverWaitMax)
	defer deadline.Stop()
	for {
		w.mutex.Lock()
		acked, err, changed := len(w.values), w.err, w.changed
		w.mutex.Unlock()
		switch {
		case err != nil:
			t.Fatal(err)
		case acked >= n:
			return
		}
		select {
		case <-changed:
		case <-w.done:
			t.Fatalf("the writer stopped after %d acknowledgements, want %d", acked, n)
		case <-deadline.C:
			t.Fatalf("%d acknowledgements in %v, want %d", acked, failoverWaitMax, n)
		}
	}
}
