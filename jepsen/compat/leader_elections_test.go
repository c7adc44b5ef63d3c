package compat

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/jepsen/harness"
)

// TestUncleanElectionRunbook walks the operator's runbook for a partition
// whose in-sync replicas are all down, on the real binary with kadm: turn
// unclean.leader.election.enable on so that a replica outside the ISR
// leads, and off again once the partition is back. Turning it on must
// elect at once (Sluice used to wait for some broker to return). The old
// leader then comes back holding acknowledged records the new one never
// had, below its high watermark, and must cut them away and follow:
// before the metadata recorded unclean elections (cluster-panic-1455),
// its assertion panicked the broker.
//
// Five nodes, so that the metadata quorum outlives two of them; the topic
// lives on nodes 1 and 2 only (min.insync.replicas=1).
func TestUncleanElectionRunbook(t *testing.T) {
	cluster := startCompatClusterOf(t, 5)
	ctx, cancel := context.WithTimeout(context.Background(), 4*failoverWaitMax)
	defer cancel()
	const topic = "runbook"
	client, err := kgo.NewClient(cluster.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	admin := kadm.NewClient(client)
	createAssigned(ctx, t, cluster, client, topic, []int32{1, 2})
	partition := func() harness.PartitionView { return runbookPartition(t, cluster, topic) }
	waitFor(ctx, t, cluster, "both replicas in sync", func() bool { p := partition(); return p.Leader == 1 && len(p.ISR) == 2 })

	produceRunbook(ctx, t, cluster, topic, "both-", 5)
	if err := cluster.Node(2).Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, cluster, "node 2 out of the ISR", func() bool { return slices.Equal(partition().ISR, []int32{1}) })
	// Acknowledged by node 1 alone: node 2 never gets these.
	produceRunbook(ctx, t, cluster, topic, "leader-only-", 5)
	// Paused, not killed: it comes back with its high watermark over
	// them in memory, as a node cut off by the network does.
	if err := cluster.Node(1).Pause(); err != nil {
		t.Fatal(err)
	}
	if err := cluster.Node(2).Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, cluster, "the partition offline, node 1 its only in-sync replica", func() bool {
		p := partition()
		return p.Leader < 0 && slices.Equal(p.ISR, []int32{1})
	})

	setUnclean(ctx, t, cluster, admin, topic, "true")
	waitFor(ctx, t, cluster, "node 2 elected outside the ISR", func() bool { return partition().Leader == 2 })
	produceRunbook(ctx, t, cluster, topic, "after-", 5)
	setUnclean(ctx, t, cluster, admin, topic, "false")

	if err := cluster.Node(1).Resume(); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, cluster, "node 1 back in the ISR", func() bool { return len(partition().ISR) == 2 })
	want := recordValues(readPartition(ctx, t, cluster, topic, 10))
	if !slices.Equal(want, runbookValues("both-", "after-")) {
		t.Fatalf("the unclean leader serves %v; want its own history: both-0..4, then after-0..4", want)
	}
	// Node 1 cut what only it had and copied node 2's log: with node 2
	// gone it leads, cleanly, and serves the same records at the same
	// offsets.
	if err := cluster.Node(2).Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, cluster, "node 1 leading again", func() bool { return partition().Leader == 1 })
	if got := recordValues(readPartition(ctx, t, cluster, topic, 10)); !slices.Equal(got, want) {
		t.Fatalf("node 1 serves %v after the runbook; node 2 served %v", got, want)
	}
	if exits := cluster.UnexpectedExits(); len(exits) > 0 {
		t.Fatalf("nodes exited on their own: %v", exits)
	}
}

// createAssigned creates a one-partition topic on exactly the replicas
// given, with min.insync.replicas=1.
func createAssigned(ctx context.Context, t *testing.T, cluster *harness.Cluster, client *kgo.Client, topic string, replicas []int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30_000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	assignment := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	assignment.Partition, assignment.Replicas = 0, replicas
	rt.ReplicaAssignment = append(rt.ReplicaAssignment, assignment)
	config := kmsg.NewCreateTopicsRequestTopicConfig()
	config.Name, config.Value = "min.insync.replicas", kmsg.StringPtr("1")
	rt.Configs = append(rt.Configs, config)
	req.Topics = append(req.Topics, rt)
	waitFor(ctx, t, cluster, "the topic created", func() bool {
		resp, err := req.RequestWith(ctx, client)
		if err != nil {
			return false
		}
		code := resp.Topics[0].ErrorCode
		return code == 0 || code == kerr.TopicAlreadyExists.Code
	})
}

// runbookPartition is partition 0 of topic as a live node sees it.
func runbookPartition(t *testing.T, cluster *harness.Cluster, topic string) harness.PartitionView {
	t.Helper()
	for _, n := range cluster.Nodes() {
		if !n.Alive() {
			continue
		}
		view, err := cluster.View(n.ID)
		if err != nil {
			continue
		}
		for _, p := range view.Partitions {
			if p.Topic == topic && p.Partition == 0 {
				return p
			}
		}
	}
	return harness.PartitionView{Leader: -2}
}

// produceRunbook writes prefix0..prefix(n-1) to partition 0, acks=all,
// from a producer of its own, each acknowledged before the next.
func produceRunbook(ctx context.Context, t *testing.T, cluster *harness.Cluster, topic, prefix string, n int) {
	t.Helper()
	producer, err := kgo.NewClient(cluster.ClientOptions(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer producer.Close()
	for i := range n {
		record := &kgo.Record{Partition: 0, Value: fmt.Appendf(nil, "%s%d", prefix, i)}
		if err := producer.ProduceSync(ctx, record).FirstErr(); err != nil {
			t.Fatalf("producing %s: %v", record.Value, err)
		}
	}
}

// setUnclean sets unclean.leader.election.enable, as kafka-configs.sh
// --alter would.
func setUnclean(ctx context.Context, t *testing.T, cluster *harness.Cluster, admin *kadm.Client, topic, value string) {
	t.Helper()
	waitFor(ctx, t, cluster, "unclean.leader.election.enable="+value, func() bool {
		responses, err := admin.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "unclean.leader.election.enable", Value: kadm.StringPtr(value)}}, topic)
		return err == nil && len(responses) == 1 && responses[0].Err == nil
	})
}

// readPartition reads partition 0 from its start until it has want
// records.
func readPartition(ctx context.Context, t *testing.T, cluster *harness.Cluster, topic string, want int) []*kgo.Record {
	t.Helper()
	offsets := map[string]map[int32]kgo.Offset{topic: {0: kgo.NewOffset().AtStart()}}
	reader, err := kgo.NewClient(cluster.ClientOptions(kgo.ConsumePartitions(offsets))...)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	var records []*kgo.Record
	for len(records) < want {
		fetches := reader.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d records: %v", len(records), want, ctx.Err())
		}
		records = append(records, fetches.Records()...)
	}
	if len(records) != want {
		t.Fatalf("read %d records, want %d: %v", len(records), want, recordValues(records))
	}
	return records
}

func recordValues(records []*kgo.Record) []string {
	var out []string
	for _, r := range records {
		out = append(out, fmt.Sprintf("%d:%s", r.Offset, r.Value))
	}
	return out
}

// runbookValues are the offsets and values the prefixes' writes take, in
// order, five each.
func runbookValues(prefixes ...string) []string {
	var out []string
	for _, prefix := range prefixes {
		for i := range 5 {
			out = append(out, fmt.Sprintf("%d:%s%d", len(out), prefix, i))
		}
	}
	return out
}

// waitFor polls done every 100 ms until it holds, failing the test at
// ctx's deadline, or as soon as a node exits on its own.
func waitFor(ctx context.Context, t *testing.T, cluster *harness.Cluster, what string, done func() bool) {
	t.Helper()
	for !done() {
		if exits := cluster.UnexpectedExits(); len(exits) > 0 {
			t.Fatalf("waiting for %s: nodes exited on their own: %v", what, exits)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestPreferredLeaderElectionAfterARestart: a partition's preferred leader
// is killed and comes back, leaving the leadership elsewhere, as a rolling
// restart does; kadm's ElectLeaders (kafka-leader-election.sh
// --election-type preferred, for every partition) moves it back once the
// node is in sync, and a second run finds nothing to do.
func TestPreferredLeaderElectionAfterARestart(t *testing.T) {
	cluster := startCompatCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*failoverWaitMax)
	defer cancel()
	const topic = "preferred"
	createClusterTopic(t, cluster, topic)
	client, err := kgo.NewClient(cluster.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	admin := kadm.NewClient(client)
	preferred := runbookPartition(t, cluster, topic).Replicas[0]
	waitFor(ctx, t, cluster, "partition 0 led by its preferred replica", func() bool { return runbookPartition(t, cluster, topic).Leader == preferred })
	if err := cluster.Node(int(preferred)).Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, cluster, "another leader", func() bool { p := runbookPartition(t, cluster, topic); return p.Leader >= 0 && p.Leader != preferred })
	if err := cluster.Node(int(preferred)).Start(); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitHealthy(ctx, failoverWaitMax, topic); err != nil {
		t.Fatal(err)
	}
	if leader := runbookPartition(t, cluster, topic).Leader; leader == preferred {
		t.Fatalf("node %d leads again without an election", leader)
	}

	results, err := admin.ElectLeaders(ctx, kadm.ElectPreferredReplica, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := results[topic][0]; !ok || r.Err != nil {
		t.Fatalf("partition 0's election: %+v (all: %+v)", r, results)
	}
	waitFor(ctx, t, cluster, "partition 0 led by its preferred replica again", func() bool { return runbookPartition(t, cluster, topic).Leader == preferred })
	results, err = admin.ElectLeaders(ctx, kadm.ElectPreferredReplica, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(results[topic]) != 0 {
		t.Fatalf("a second election for every partition answered %+v; want nothing needing one", results[topic])
	}
	set := kadm.TopicsSet{}
	set.Add(topic, 0)
	results, err = admin.ElectLeaders(ctx, kadm.ElectPreferredReplica, set)
	if err != nil {
		t.Fatal(err)
	}
	if r := results[topic][0]; !errors.Is(r.Err, kerr.ElectionNotNeeded) {
		t.Fatalf("partition 0 named: %+v, want ELECTION_NOT_NEEDED", r)
	}
}
