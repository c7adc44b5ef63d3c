package compat

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/jepsen/harness"
)

// TestSluiceTopicReassign drives `sluice topic reassign` and `sluice
// topic reassignments` (kafka-reassign-partitions.sh --execute, --cancel,
// --list) against three real nodes, checking what they print and how
// they exit. With node 3 down, reassignments onto it stay in progress:
// the list shows them, a --wait runs out of time and says so, and a
// --cancel file gives them up. With node 3 back, --wait follows a move to
// its end and prints where the partition is; a file whose one entry is
// refused moves the others and exits 1 naming Kafka's error; a size
// change under --disallow-replication-factor-change is refused; a bad
// file exits 2. Every record written before reads back afterwards.
func TestSluiceTopicReassign(t *testing.T) {
	cluster := startCompatCluster(t)
	binary := BuildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), reassignTestTimeout)
	defer cancel()
	const topic = "cli-moved"
	all := strings.Join(cluster.Bootstrap(), ",")
	firstTwo := cluster.Node(1).Advertised() + "," + cluster.Node(2).Advertised()
	client, err := kgo.NewClient(cluster.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	createWithAssignment(ctx, t, cluster, client, topic, [][]int32{{1, 2}, {1, 2}, {2, 1}})
	if err := cluster.WaitHealthy(ctx, failoverWaitMax, topic); err != nil {
		t.Fatal(err)
	}
	written := map[int32][]string{}
	for p := range int32(3) {
		written[p] = produceNumbered(ctx, t, cluster, topic, p, "cli", 0, 5)
	}
	sluice := func(args ...string) cliRun { return runSluice(ctx, t, binary, args...) }

	sluice("topic", "reassignments", "--brokers", all).
		expect(t, 0, "^no reassignment in progress\n$", "^$")

	// Node 3 down (fenced, so no node names it the controller): moves
	// onto it start, and cannot finish.
	if err := cluster.Node(3).Kill(); err != nil {
		t.Fatal(err)
	}
	waitClusterUntil(ctx, t, cluster, "nodes 1 and 2 listing brokers 1 and 2 only", func() error {
		for _, id := range []int{1, 2} {
			view, err := cluster.View(id)
			if err != nil {
				return err
			}
			if !slices.Equal(view.Brokers, []int32{1, 2}) {
				return fmt.Errorf("node %d lists brokers %v", id, view.Brokers)
			}
		}
		return nil
	})
	sluice("topic", "reassign", "--brokers", firstTwo, "--partition", "0", "--replicas", "1,3", topic).
		expect(t, 0, `^cli-moved-0: reassignment to \[1 3\] started\n$`, "^$")
	sluice("topic", "reassign", "--brokers", firstTwo, "--wait", "--timeout", "2s", "--partition", "1", "--replicas", "1,3", topic).
		expect(t, 1, `^cli-moved-1: reassignment to \[1 3\] started\n$`,
			`^sluice topic reassign: still in progress after 2s:\n  cli-moved-1: replicas \[1 3 2\], adding \[3\], removing \[2\]\n$`)
	listed := `^cli-moved-0\s+replicas \[1 3 2\]\s+adding \[3\]\s+removing \[2\]\ncli-moved-1\s+replicas \[1 3 2\]\s+adding \[3\]\s+removing \[2\]\n$`
	sluice("topic", "reassignments", "--brokers", firstTwo).expect(t, 0, listed, "^$")
	sluice("topic", "reassignments", "--brokers", firstTwo, topic).expect(t, 0, listed, "^$")
	sluice("topic", "reassignments", "--brokers", firstTwo, "no-such-topic").
		expect(t, 1, "^$", "^no-such-topic: UNKNOWN_TOPIC_OR_PARTITION")

	// Cancelled from a file, as kafka-reassign-partitions.sh --cancel
	// reads its --execute file: both partitions go back to [1 2].
	cancelFile := writeFile(t, "cancel.json", `{"version":1,"partitions":[
		{"topic":"cli-moved","partition":0,"replicas":[1,3],"log_dirs":["any","any"]},
		{"topic":"cli-moved","partition":1,"replicas":[1,3]}]}`)
	sluice("topic", "reassign", "--brokers", firstTwo, "--cancel", "--wait", "--reassignment-json-file", cancelFile).
		expect(t, 0, `(?s)^cli-moved-0: reassignment cancelled\ncli-moved-1: reassignment cancelled\n`+
			`cli-moved-[01]: no longer being reassigned\ncli-moved-[01]: no longer being reassigned\n`+
			`  cli-moved-0\s+leader [12]\s+replicas \[1 2\]\s+isr \[(1 2|2 1)\]\n`+
			`  cli-moved-1\s+leader [12]\s+replicas \[1 2\]\s+isr \[(1 2|2 1)\]\n$`, "^$")
	sluice("topic", "reassignments", "--brokers", firstTwo).expect(t, 0, "^no reassignment in progress\n$", "^$")
	sluice("topic", "reassign", "--brokers", firstTwo, "--partition", "0", "--cancel", topic).
		expect(t, 1, "^$", `^cli-moved-0: NO_REASSIGNMENT_IN_PROGRESS: .*cli-moved-0 is not being reassigned\n$`)

	// Node 3 back: --wait follows a move to its end.
	if err := cluster.Node(3).Start(); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitHealthy(ctx, failoverWaitMax, topic); err != nil {
		t.Fatal(err)
	}
	sluice("topic", "reassign", "--brokers", all, "--wait", "--partition", "0", "--replicas", "3,1", topic).
		expect(t, 0, `^cli-moved-0: reassignment to \[3 1\] started\ncli-moved-0: reassignment complete\n`+
			`  cli-moved-0\s+leader [13]\s+replicas \[3 1\]\s+isr \[(1 3|3 1)\]\n$`, "^$")

	// A file moving two partitions (one to a single replica) and naming a
	// broker that does not exist for the third: the two move, the third
	// is refused with Kafka's error, and the exit status says so.
	moveFile := writeFile(t, "move.json", `{"version":1,"partitions":[
		{"topic":"cli-moved","partition":1,"replicas":[2,3]},
		{"topic":"cli-moved","partition":2,"replicas":[3],"log_dirs":["any"]},
		{"topic":"cli-moved","partition":0,"replicas":[3,99]}]}`)
	sluice("topic", "reassign", "--brokers", all, "--wait", "--reassignment-json-file", moveFile).
		expect(t, 1, `(?s)^cli-moved-1: reassignment to \[2 3\] started\ncli-moved-2: reassignment to \[3\] started\n`+
			`cli-moved-[12]: reassignment complete\ncli-moved-[12]: reassignment complete\n`+
			`  cli-moved-1\s+leader [23]\s+replicas \[2 3\]\s+isr \[(2 3|3 2)\]\n`+
			`  cli-moved-2\s+leader 3\s+replicas \[3\]\s+isr \[3\]\n$`,
			`^cli-moved-0: INVALID_REPLICA_ASSIGNMENT: .*broker 99, which is not registered\n$`)

	// Refusals before any request, and KIP-1074's size check.
	sluice("topic", "reassign", "--brokers", all, "--disallow-replication-factor-change", "--partition", "2", "--replicas", "1,2", topic).
		expect(t, 1, "^$", `^cli-moved-2: INVALID_REPLICATION_FACTOR: .*from 1 to 2`)
	badFile := writeFile(t, "bad.json", `{"version":1,"partitions":[{"topic":"cli-moved","partition":0,"replica":[1]}]}`)
	sluice("topic", "reassign", "--brokers", all, "--reassignment-json-file", badFile).
		expect(t, 2, "^$", `^sluice topic reassign: .*bad.json: partitions\[0\]: json: unknown field "replica"\n$`)
	sluice("topic", "reassign", "--brokers", all, "--partition", "0", "--replicas", "1,1", topic).
		expect(t, 2, "^$", `^sluice topic reassign: --replicas "1,1": broker 1 is named twice\n$`)

	sluice("topic", "reassignments", "--brokers", all).expect(t, 0, "^no reassignment in progress\n$", "^$")
	waitEveryNodeShows(ctx, t, cluster, topic, map[int32][]int32{0: {3, 1}, 1: {2, 3}, 2: {3}})
	checkReadBack(ctx, t, cluster, topic, written)
	if exits := cluster.UnexpectedExits(); len(exits) > 0 {
		t.Fatalf("nodes exited on their own: %v", exits)
	}
}

// writeFile writes text to a file of the test's and returns its path.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// createWithAssignment creates topic with one partition per entry of
// replicas, on exactly those replicas (CreateTopics' replica assignment,
// as kafka-topics.sh --replica-assignment sends it).
func createWithAssignment(ctx context.Context, t *testing.T, cluster *harness.Cluster, client *kgo.Client, topic string, replicas [][]int32) {
	t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 30_000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, -1, -1
	for p, ids := range replicas {
		assignment := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		assignment.Partition, assignment.Replicas = int32(p), ids
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, assignment)
	}
	req.Topics = append(req.Topics, rt)
	waitClusterUntil(ctx, t, cluster, "the topic created", func() error {
		resp, err := req.RequestWith(ctx, client)
		if err != nil {
			return err
		}
		if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return err
		}
		return nil
	})
}
