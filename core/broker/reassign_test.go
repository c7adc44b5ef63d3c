package broker

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

// reassignmentSettleMax bounds, in virtual time, how long a reassignment
// of a small partition takes on a healthy cluster.
const reassignmentSettleMax = 20 * time.Second

// reassign asks for topic's partition to move to target (nil cancels), with
// AllowReplicationFactorChange set, and returns the partition's answer.
func (c *testClient) reassign(topic string, partition int32, target []int32) kmsg.AlterPartitionAssignmentsResponseTopicPartition {
	c.node.t.Helper()
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	req.Version = 1
	req.AllowReplicationFactorChange = true
	req.TimeoutMillis = 30_000
	rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	rp.Partition, rp.Replicas = partition, target
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := c.request(req).(*kmsg.AlterPartitionAssignmentsResponse)
	requireNoError(c.node.t, "reassignment request", resp.ErrorCode, resp.ErrorMessage)
	return resp.Topics[0].Partitions[0]
}

// reassignments lists every reassignment in progress.
func (c *testClient) reassignments() []kmsg.ListPartitionReassignmentsResponseTopic {
	c.node.t.Helper()
	req := kmsg.NewPtrListPartitionReassignmentsRequest()
	req.TimeoutMillis = 30_000
	resp := c.request(req).(*kmsg.ListPartitionReassignmentsResponse)
	requireNoError(c.node.t, "listing reassignments", resp.ErrorCode, resp.ErrorMessage)
	return resp.Topics
}

// partitionEverywhere reports whether every live node's image shows
// topic-partition as want says.
func (c *testCluster) partitionEverywhere(topic string, partition int32, want func(p *metadata.Partition) bool) bool {
	for _, id := range c.live() {
		p, ok := c.nodes[id].broker.image.Partition(topic, partition)
		if !ok || !want(p) {
			return false
		}
	}
	return true
}

func TestClusterReassignmentMovesAPartitionAndDeletesTheOldCopies(t *testing.T) {
	c := newTestCluster(t, 4, 11)
	admin := c.client(c.controllerLeader())
	admin.createTopicRF("moving", 1, 2)
	md := admin.metadata("moving").Topics[0].Partitions[0]
	before := slices.Clone(md.Replicas)
	leader := c.client(md.Leader)
	for _, v := range []string{"a", "b", "c"} {
		if _, code := leader.produceAcks("moving", 0, -1, v); code != 0 {
			t.Fatalf("produce %s: %v", v, kerr.ErrorForCode(code))
		}
	}
	var target []int32
	for _, id := range c.ids {
		if !slices.Contains(before, id) {
			target = append(target, id)
		}
	}

	answer := admin.reassign("moving", 0, target)
	requireNoError(t, "reassign", answer.ErrorCode, answer.ErrorMessage)
	took := c.runUntil("the reassignment completes everywhere", reassignmentSettleMax, func() bool {
		return c.partitionEverywhere("moving", 0, func(p *metadata.Partition) bool {
			return slices.Equal(p.Replicas, target) && !p.Reassigning() && slices.Contains(target, p.Leader)
		})
	})
	t.Logf("replicas %v → %v in %v", before, target, took)
	if listed := admin.reassignments(); len(listed) != 0 {
		t.Fatalf("still listed after completing: %+v", listed)
	}

	md = admin.metadata("moving").Topics[0].Partitions[0]
	if !slices.Equal(md.Replicas, target) || !slices.Contains(target, md.Leader) {
		t.Fatalf("Metadata after the move: replicas %v leader %d, want %v", md.Replicas, md.Leader, target)
	}
	newLeader := c.client(md.Leader)
	if _, code := newLeader.produceAcks("moving", 0, -1, "d"); code != 0 {
		t.Fatalf("produce to the new leader: %v", kerr.ErrorForCode(code))
	}
	values, code, _ := newLeader.fetchAll("moving", 0, 0)
	requireNoError(t, "fetch from the new leader", code, nil)
	if !slices.Equal(values, []string{"a", "b", "c", "d"}) {
		t.Fatalf("the moved partition holds %v, want [a b c d]", values)
	}
	c.runUntil("the new replicas agree", reassignmentSettleMax, func() bool {
		return c.partitionEverywhere("moving", 0, func(p *metadata.Partition) bool { return len(p.ISR) == len(target) })
	})
	for _, id := range before {
		if dirs := partitionDirectories(t, c.nodes[id], "moving"); len(dirs) != 0 {
			t.Fatalf("node %d, reassigned away, still has %v", id, dirs)
		}
		if _, open := c.nodes[id].broker.partitions[partitionKey{topic: "moving", partition: 0}]; open {
			t.Fatalf("node %d, reassigned away, still has the replica open", id)
		}
	}

	// An old replica restarted takes nothing back.
	c.crash(before[0])
	c.restart(before[0])
	c.awaitBrokers(before[0])
	if dirs := partitionDirectories(t, c.nodes[before[0]], "moving"); len(dirs) != 0 {
		t.Fatalf("node %d has %v again after a restart", before[0], dirs)
	}
}

func TestReassignmentRequestsAreValidated(t *testing.T) {
	c := newTestCluster(t, 3, 12)
	admin := c.client(c.controllerLeader())
	admin.createTopicRF("t", 1, 2)
	replicas := admin.metadata("t").Topics[0].Partitions[0].Replicas
	for _, tc := range []struct {
		name   string
		topic  string
		target []int32
		want   *kerr.Error
	}{
		{"unknown topic", "nope", []int32{1}, kerr.UnknownTopicOrPartition},
		{"empty target", "t", []int32{}, kerr.InvalidReplicaAssignment},
		{"a broker twice", "t", []int32{1, 1}, kerr.InvalidReplicaAssignment},
		{"an unregistered broker", "t", []int32{1, 9}, kerr.InvalidReplicaAssignment},
		{"cancelling nothing", "t", nil, kerr.NoReassignmentInProgress},
		{"the same replicas", "t", replicas, nil},
	} {
		answer := admin.reassign(tc.topic, 0, tc.target)
		requireError(t, tc.name, answer.ErrorCode, answer.ErrorMessage, tc.want)
	}

	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	req.Version = 1
	req.AllowReplicationFactorChange = false // true by default
	rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	rt.Topic = "t"
	rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	rp.Partition, rp.Replicas = 0, []int32{1, 2, 3}
	rt.Partitions = append(rt.Partitions, rp, rp)
	req.Topics = append(req.Topics, rt)
	answers := admin.request(req).(*kmsg.AlterPartitionAssignmentsResponse).Topics[0].Partitions
	requireError(t, "a replication factor change not allowed", answers[0].ErrorCode, answers[0].ErrorMessage, kerr.InvalidReplicationFactor)
	requireError(t, "a partition named twice", answers[1].ErrorCode, answers[1].ErrorMessage, kerr.InvalidRequest)
	if p := admin.metadata("t").Topics[0].Partitions[0]; !slices.Equal(p.Replicas, replicas) {
		t.Fatalf("refused requests moved the partition: %v, was %v", p.Replicas, replicas)
	}
	if listed := admin.reassignments(); len(listed) != 0 {
		t.Fatalf("listed %+v with nothing in progress", listed)
	}
}

// A reassignment to a broker that is down stays in progress, listed, until
// it is cancelled; cancelling keeps the original replicas and leader.
func TestCancellingAReassignmentKeepsTheOriginalReplicas(t *testing.T) {
	c := newTestCluster(t, 4, 13)
	admin := c.client(c.controllerLeader())
	admin.createTopicRF("t", 1, 2)
	md := admin.metadata("t").Topics[0].Partitions[0]
	original, leader := slices.Clone(md.Replicas), md.Leader
	down := int32(-1)
	for _, id := range c.ids {
		if !slices.Contains(original, id) && id != c.controllerLeader() {
			down = id
			break
		}
	}
	c.crash(down)
	target := []int32{original[0], down}
	answer := admin.reassign("t", 0, target)
	requireNoError(t, "reassign", answer.ErrorCode, answer.ErrorMessage)
	c.run(5 * time.Second)
	listed := admin.reassignments()
	if len(listed) != 1 || len(listed[0].Partitions) != 1 {
		t.Fatalf("listed %+v, want the one in progress", listed)
	}
	inProgress := listed[0].Partitions[0]
	wantReplicas := append(slices.Clone(target), original[1])
	if !slices.Equal(inProgress.Replicas, wantReplicas) || !slices.Equal(inProgress.AddingReplicas, []int32{down}) ||
		!slices.Equal(inProgress.RemovingReplicas, []int32{original[1]}) {
		t.Fatalf("in progress: replicas %v adding %v removing %v; want %v, [%d], [%d]",
			inProgress.Replicas, inProgress.AddingReplicas, inProgress.RemovingReplicas, wantReplicas, down, original[1])
	}

	answer = admin.reassign("t", 0, nil)
	requireNoError(t, "cancel", answer.ErrorCode, answer.ErrorMessage)
	c.runUntil("the cancellation applied everywhere", reassignmentSettleMax, func() bool {
		return c.partitionEverywhere("t", 0, func(p *metadata.Partition) bool {
			return slices.Equal(p.Replicas, original) && !p.Reassigning() && p.Leader == leader
		})
	})
	if listed := admin.reassignments(); len(listed) != 0 {
		t.Fatalf("listed %+v after the cancellation", listed)
	}
	c.restart(down)
	c.awaitBrokers(down)
	if dirs := partitionDirectories(t, c.nodes[down], "t"); len(dirs) != 0 {
		t.Fatalf("node %d, never a replica in the end, has %v", down, dirs)
	}
}

// kafka-reassign-partitions.sh --verify clears the replication throttles
// it may have set, on every topic and broker involved, and fails if that
// fails. Sluice does not throttle replication: clearing succeeds and
// changes nothing; setting one is refused.
func TestClearingReplicationThrottlesSucceedsAndSettingThemIsRefused(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("t", 1)
	r := c.alterIncrementally("t",
		op("leader.replication.throttled.replicas", kmsg.IncrementalAlterConfigOpDelete, ""),
		op("follower.replication.throttled.replicas", kmsg.IncrementalAlterConfigOpDelete, ""))
	requireNoError(t, "clearing a topic's throttles", r.ErrorCode, r.ErrorMessage)
	r = c.alterIncrementally("t", op("leader.replication.throttled.replicas", kmsg.IncrementalAlterConfigOpSet, "*"))
	requireError(t, "setting a topic's throttle", r.ErrorCode, r.ErrorMessage, kerr.InvalidConfig)

	broker := func(operation kmsg.IncrementalAlterConfigOp, names ...string) kmsg.IncrementalAlterConfigsResponseResource {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		resource := kmsg.NewIncrementalAlterConfigsRequestResource()
		resource.ResourceType, resource.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
		for _, name := range names {
			resource.Configs = append(resource.Configs, op(name, operation, "1000"))
		}
		req.Resources = append(req.Resources, resource)
		return c.request(req).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
	}
	b := broker(kmsg.IncrementalAlterConfigOpDelete, "leader.replication.throttled.rate", "follower.replication.throttled.rate",
		"replica.alter.log.dirs.io.max.bytes.per.second")
	requireNoError(t, "clearing a broker's throttles", b.ErrorCode, b.ErrorMessage)
	b = broker(kmsg.IncrementalAlterConfigOpSet, "leader.replication.throttled.rate")
	requireError(t, "setting a broker's throttle", b.ErrorCode, b.ErrorMessage, kerr.InvalidRequest)
	b = broker(kmsg.IncrementalAlterConfigOpDelete, "leader.replication.throttled.rate", "num.io.threads")
	requireError(t, "clearing a throttle and another config", b.ErrorCode, b.ErrorMessage, kerr.InvalidRequest)
	for _, config := range c.describeConfigs(kmsg.ConfigResourceTypeTopic, "t").Configs {
		if config.Source == kmsg.ConfigSourceDynamicTopicConfig {
			t.Fatalf("clearing throttles left %s=%v set", config.Name, config.Value)
		}
	}
}
