package harness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The operator's rounds: a partition of the topic, and a target of rf
// distinct nodes of the cluster in a random order, or a cancellation in a
// fifth of the rounds; the same seed draws the same rounds.
func TestDrawReassignment(t *testing.T) {
	nodes := []int32{1, 2, 3, 4, 5}
	const draws = 10_000
	random := rand.New(rand.NewPCG(7, reassignStream))
	cancels := 0
	partitions := map[int32]bool{}
	firsts := map[int32]bool{}
	sets := map[string]bool{}
	for range draws {
		partition, target := drawReassignment(random, 4, nodes, 3)
		if partition < 0 || partition >= 4 {
			t.Fatalf("partition %d of 4", partition)
		}
		partitions[partition] = true
		if target == nil {
			cancels++
			continue
		}
		if len(target) != 3 || len(distinct(target)) != 3 {
			t.Fatalf("target %v: want 3 distinct nodes", target)
		}
		for _, id := range target {
			if !slices.Contains(nodes, id) {
				t.Fatalf("target %v names node %d, not one of %v", target, id, nodes)
			}
		}
		firsts[target[0]] = true
		sorted := slices.Sorted(slices.Values(target))
		sets[fmt.Sprint(sorted)] = true
	}
	if share := float64(cancels) / draws; share < reassignCancelShare-0.03 || share > reassignCancelShare+0.03 {
		t.Errorf("%d cancellations in %d rounds: want about %v of them", cancels, draws, reassignCancelShare)
	}
	if len(partitions) != 4 || len(firsts) != len(nodes) || len(sets) != 10 {
		t.Errorf("drew partitions %v, first replicas %v and %d sets of 3 nodes of 5: want every one", partitions, firsts, len(sets))
	}

	again, other := rand.New(rand.NewPCG(7, reassignStream)), rand.New(rand.NewPCG(7, reassignStream))
	for range 100 {
		p1, t1 := drawReassignment(again, 4, nodes, 3)
		p2, t2 := drawReassignment(other, 4, nodes, 3)
		if p1 != p2 || !slices.Equal(t1, t2) {
			t.Fatalf("the same seed drew %d %v and %d %v", p1, t1, p2, t2)
		}
	}
	// All the nodes: only their order changes.
	if _, target := drawReassignment(rand.New(rand.NewPCG(1, 2)), 1, []int32{1, 2, 3}, 3); target != nil && len(distinct(target)) != 3 {
		t.Errorf("target %v of 3 nodes of 3", target)
	}
}

// Which answers Kafka's controller gives: success, retriable errors,
// NO_REASSIGNMENT_IN_PROGRESS to a cancellation, and
// ELIGIBLE_LEADERS_NOT_AVAILABLE to a cancellation or to a target that may
// replace a reassignment in progress.
func TestJudgeReassignment(t *testing.T) {
	wrapped := func(err error) error { return errors.Join(errors.New("context"), err) }
	for _, c := range []struct {
		name              string
		target, replacing bool
		err               error
		want              reassignOutcome
	}{
		{"target accepted", true, false, nil, reassignConfirmed},
		{"cancellation accepted", false, true, nil, reassignConfirmed},
		{"no controller", true, false, kerr.NotController, reassignRetry},
		{"timed out", false, false, kerr.RequestTimedOut, reassignRetry},
		{"nothing to cancel", false, false, kerr.NoReassignmentInProgress, reassignRefused},
		{"cancel while only new members in sync", false, true, wrapped(kerr.EligibleLeadersNotAvailable), reassignRefused},
		{"replacement while only new members in sync", true, true, kerr.EligibleLeadersNotAvailable, reassignRefused},
		{"first target refused for want of eligible leaders", true, false, kerr.EligibleLeadersNotAvailable, reassignUnexpected},
		{"target answered no reassignment in progress", true, true, kerr.NoReassignmentInProgress, reassignUnexpected},
		{"invalid assignment", true, true, kerr.InvalidReplicaAssignment, reassignUnexpected},
		{"replication factor", true, true, kerr.InvalidReplicationFactor, reassignUnexpected},
		{"unknown partition of a topic that exists", true, false, kerr.UnknownTopicOrPartition, reassignUnexpected},
		{"invalid request", false, false, kerr.InvalidRequest, reassignUnexpected},
	} {
		if got := judgeReassignment(c.target, c.replacing, c.err); got != c.want {
			t.Errorf("%s: judged %d, want %d", c.name, got, c.want)
		}
	}
}

// The operator's final check on a real cluster: a partition moved off a
// node passes once the move completed and the node deleted its copy; a
// directory of a partition on a node outside its replicas is found on
// disk, and a reassignment left in progress (its new replica paused) is
// reported stuck.
func TestReassignerCheck(t *testing.T) {
	cluster := startTestCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	w := Workload{Topic: "moved", Partitions: 2, ReplicationFactor: 2, ReassignEvery: time.Second}
	r, err := newReassigner(cluster, w, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.client.Close()
	r.settleTimeout, r.strayTimeout = 20*time.Second, 2*time.Second
	if _, err := CreateTopic(ctx, r.client, w.Topic, w.Partitions, w.ReplicationFactor, nil); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitHealthy(ctx, time.Minute, w.Topic); err != nil {
		t.Fatal(err)
	}
	admin := kadm.NewClient(r.client)
	replicasOf := func(partition int32) []int32 {
		t.Helper()
		metadata, err := admin.Metadata(ctx, w.Topic)
		if err != nil {
			t.Fatal(err)
		}
		return metadata.Topics[w.Topic].Partitions[partition].Replicas
	}
	// Move partition 0 to the node without it and one of its replicas.
	before := replicasOf(0)
	outside := int32(6) - before[0] - before[1]
	target := []int32{outside, before[0]}
	reassign := func(partition int32, target []int32) {
		t.Helper()
		req := kadm.AlterPartitionAssignmentsReq{}
		req.Assign(w.Topic, partition, target)
		results, err := admin.AlterPartitionAssignments(ctx, req)
		if err == nil {
			err = results.Error()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	reassign(0, target)
	t.Logf("moving %s-0 from %v to %v", w.Topic, before, target)
	if problems := r.check(ctx); len(problems) > 0 {
		t.Fatalf("moving %s-0 from %v to %v: %v", w.Topic, before, target, problems)
	}
	if after := replicasOf(0); !slices.Equal(after, target) {
		t.Fatalf("%s-0 has replicas %v after a move to %v", w.Topic, after, target)
	}
	if _, err := os.Stat(filepath.Join(cluster.Node(int(before[1])).dataDir, w.Topic+"-0")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("node %d, moved off %s-0, still has its directory (%v)", before[1], w.Topic, err)
	}

	// A directory of partition 1 on the node outside its replicas.
	replicas := replicasOf(1)
	stray := cluster.Node(int(6 - replicas[0] - replicas[1]))
	if err := os.Mkdir(filepath.Join(stray.dataDir, w.Topic+"-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("a stray directory of %s-1 on node %d", w.Topic, stray.ID)
	problems := r.check(ctx)
	if len(problems) != 1 || !strings.Contains(problems[0], fmt.Sprintf("node %d keeps", stray.ID)) {
		t.Fatalf("a stray directory of %s-1 on node %d: check found %v", w.Topic, stray.ID, problems)
	}
	if err := os.Remove(filepath.Join(stray.dataDir, w.Topic+"-1")); err != nil {
		t.Fatal(err)
	}

	// Partition 1 moved to a paused node: the new replica cannot catch
	// up, and the move never completes.
	replicas = replicasOf(1)
	joining := cluster.Node(int(6 - replicas[0] - replicas[1]))
	if err := joining.Pause(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = joining.Resume() }()
	t.Logf("moving %s-1 from %v to %v, node %d paused", w.Topic, replicas, []int32{replicas[0], int32(joining.ID)}, joining.ID)
	reassign(1, []int32{replicas[0], int32(joining.ID)})
	t.Log("confirmed")
	r.settleTimeout = 8 * time.Second
	problems = r.check(ctx)
	if len(problems) != 1 || !strings.HasPrefix(problems[0], "reassignments stuck:") || !strings.Contains(problems[0], "in progress") {
		t.Fatalf("a move that cannot complete: check found %v", problems)
	}
	t.Logf("as it should, check found: %s", problems[0])
}
