package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"sluice/core/controller"
	"sluice/jepsen/compat"
)

// startTestCluster starts a cluster for one test, stopped when it ends;
// a failed test prints the end of every node's log.
func startTestCluster(t *testing.T, nodes int, settings ...string) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("starts real broker processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterStartTimeout)
	defer cancel()
	dir := t.TempDir()
	cluster, err := StartCluster(ctx, ClusterOptions{Binary: compat.BuildBinary(t), Nodes: nodes, Dir: dir, Settings: settings})
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

// TestPartitionCutsReplicationAndQuorum isolates the metadata quorum's
// leader behind its proxies and checks the cut is real: not one byte
// crosses a link between it and the others, the others elect a new
// quorum leader, and they fence it out of every ISR (its replication and
// its heartbeats are both cut), while clients still reach every node.
// Healed, it catches up and every ISR is full again.
func TestPartitionCutsReplicationAndQuorum(t *testing.T) {
	cluster := startTestCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const topic = "cut"
	client, err := kgo.NewClient(kgo.SeedBrokers(cluster.Bootstrap()...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.MetadataMinAge(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if _, err := CreateTopic(ctx, client, topic, 3, 3, map[string]string{"min.insync.replicas": "2"}); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitHealthy(ctx, time.Minute, topic); err != nil {
		t.Fatal(err)
	}
	isolated := cluster.QuorumLeader()
	if isolated < 1 {
		t.Fatal("no quorum leader")
	}
	var others []Endpoint
	for id := Endpoint(1); id <= 3; id++ {
		if id != Endpoint(isolated) {
			others = append(others, id)
		}
	}
	t.Logf("isolating node %d (the quorum leader) from nodes %v", isolated, others)
	cluster.Links.Partition(Stall, []Endpoint{Endpoint(isolated)}, others)

	var newLeader int32
	waitUntil(t, ctx, "a new quorum leader on the majority side", func() error {
		for _, id := range others {
			newLeader = quorumLeaderSeenBy(cluster, int(id))
			if newLeader > 0 && newLeader != isolated {
				return nil
			}
		}
		return fmt.Errorf("the majority sees leader %d", newLeader)
	})
	waitUntil(t, ctx, "the isolated node fenced out of every ISR", func() error {
		view, err := cluster.View(int(others[0]))
		if err != nil {
			return err
		}
		for _, p := range view.Partitions {
			if p.Topic == topic && (slices.Contains(p.ISR, isolated) || p.Leader == isolated || len(p.ISR) != 2) {
				return fmt.Errorf("node %d sees %s", others[0], p)
			}
		}
		return nil
	})
	// Acknowledged writes go on with two replicas in sync, through the
	// client proxies, which the partition does not touch.
	before := crossingBytes(cluster.Links, Endpoint(isolated), others)
	for partition := range int32(3) {
		if err := client.ProduceSync(ctx, &kgo.Record{Partition: partition, Value: []byte("during")}).FirstErr(); err != nil {
			t.Fatalf("producing to partition %d during the partition: %v", partition, err)
		}
	}
	if after := crossingBytes(cluster.Links, Endpoint(isolated), others); after != before {
		t.Fatalf("bytes crossed the partition: %d before producing, %d after", before, after)
	}
	if cluster.Links.Bytes(Link{Client, others[0]}) == 0 {
		t.Fatal("no client bytes reached the majority")
	}

	cluster.Links.HealAll()
	if err := cluster.WaitHealthy(ctx, time.Minute, topic); err != nil {
		t.Fatalf("after healing: %v", err)
	}
	if after := crossingBytes(cluster.Links, Endpoint(isolated), others); after == before {
		t.Fatal("no bytes crossed the healed links")
	}
}

// crossingBytes adds up the bytes forwarded on every link between node
// and others, both ways.
func crossingBytes(links *Links, node Endpoint, others []Endpoint) uint64 {
	var total uint64
	for _, other := range others {
		total += links.Bytes(Link{node, other}) + links.Bytes(Link{other, node})
	}
	return total
}

// quorumLeaderSeenBy asks one node (around the proxies) for the quorum
// leader; -1 if it does not know.
func quorumLeaderSeenBy(c *Cluster, id int) int32 {
	return c.quorumLeaderSeenBy(c.Node(id))
}

// waitUntil polls check until it passes, failing the test at ctx's end.
func waitUntil(t *testing.T, ctx context.Context, what string, check func() error) {
	t.Helper()
	for {
		err := check()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// The nodes' log lines name the partitions a controller elected a leader
// of outside the ISR, once each, of the topic asked for only.
func TestUncleanElectedPartitionsAreReadFromTheLogs(t *testing.T) {
	dir := t.TempDir()
	line := func(topic string, partition int) string {
		return fmt.Sprintf("time=2026-12-01T00:00:00Z level=WARN msg=%q role=controller topic=%s partition=%d leader=2 previous_isr=[1]\n",
			controller.UncleanElectionMessage, topic, partition)
	}
	logs := []string{filepath.Join(dir, "node-1.log"), filepath.Join(dir, "node-2.log")}
	contents := []string{
		"time=x level=INFO msg=\"controller active\" role=controller\n" + line("jepsen", 2) + line("other", 0),
		line("jepsen", 0) + line("jepsen", 2),
	}
	for i, path := range logs {
		if err := os.WriteFile(path, []byte(contents[i]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := uncleanElectedPartitions(logs, "jepsen")
	if err != nil || !slices.Equal(got, []int32{0, 2}) {
		t.Fatalf("uncleanElectedPartitions = %v, %v; want [0 2]", got, err)
	}
}

// TestStartFailureQuotesTheNodesThatExited: a cluster whose nodes cannot
// start fails with each node's exit and the end of its log in the error,
// since a test's directory, and the logs in it, are gone once it fails.
func TestStartFailureQuotesTheNodesThatExited(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real broker processes")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := StartCluster(ctx, ClusterOptions{Binary: compat.BuildBinary(t), Nodes: 2, Dir: t.TempDir(),
		Settings: []string{"no.such.setting=1"}})
	if err == nil {
		t.Fatal("a cluster started with a setting no broker knows")
	}
	for _, want := range []string{
		"node 1 exited on its own during the start (exit status 2)",
		"node 2 exited on its own during the start (exit status 2)",
		`unknown setting "no.such.setting"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q:\n%v", want, err)
		}
	}
}
