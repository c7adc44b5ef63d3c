package broker

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/group"
	"sluice/core/metadata"
)

// findCoordinator asks for a group's coordinator with FindCoordinator v4.
func (c *testClient) findCoordinator(keyType int8, keys ...string) []kmsg.FindCoordinatorResponseCoordinator {
	c.node.t.Helper()
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version = 4
	req.CoordinatorType = keyType
	req.CoordinatorKeys = keys
	return c.request(req).(*kmsg.FindCoordinatorResponse).Coordinators
}

// groupMember is one consumer of a group, on its own connection.
type groupMember struct {
	client     *testClient
	group      string
	id         string
	generation int32
	leader     string
	members    []kmsg.JoinGroupResponseMember
	assignment string
}

func (n *testNode) groupMember(group string) *groupMember {
	return &groupMember{client: n.connect(), group: group}
}

func (m *groupMember) joinRequest() *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = 7
	req.Group = m.group
	req.MemberID = m.id
	req.SessionTimeoutMillis = 10_000
	req.RebalanceTimeoutMillis = 30_000
	req.ProtocolType = "consumer"
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name = "range"
	p.Metadata = (&kmsg.ConsumerMemberMetadata{Topics: []string{"orders"}}).AppendTo(nil)
	req.Protocols = append(req.Protocols, p)
	return req
}

// startJoin does the MEMBER_ID_REQUIRED round trip and sends the join
// that parks in the rebalance.
func (m *groupMember) startJoin() *pendingRequest {
	t := m.client.node.t
	t.Helper()
	for {
		resp := m.client.request(m.joinRequest()).(*kmsg.JoinGroupResponse)
		if resp.ErrorCode == kerr.CoordinatorLoadInProgress.Code {
			// The offsets partition was just created and is loading:
			// a client retries.
			m.client.node.run(10 * time.Millisecond)
			continue
		}
		requireError(t, "first join", resp.ErrorCode, nil, kerr.MemberIDRequired)
		m.id = resp.MemberID
		return m.client.send(m.joinRequest())
	}
}

func (m *groupMember) joined(pending *pendingRequest) {
	t := m.client.node.t
	t.Helper()
	resp := pending.await().(*kmsg.JoinGroupResponse)
	requireNoError(t, "join", resp.ErrorCode, nil)
	m.generation, m.leader, m.members = resp.Generation, resp.LeaderID, resp.Members
}

func (m *groupMember) syncRequest(assignments map[string]string) *kmsg.SyncGroupRequest {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = 5
	req.Group = m.group
	req.Generation = m.generation
	req.MemberID = m.id
	for _, id := range sortedStrings(assignments) {
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID, a.MemberAssignment = id, []byte(assignments[id])
		req.GroupAssignment = append(req.GroupAssignment, a)
	}
	return req
}

func (m *groupMember) synced(pending *pendingRequest) {
	t := m.client.node.t
	t.Helper()
	resp := pending.await().(*kmsg.SyncGroupResponse)
	requireNoError(t, "sync", resp.ErrorCode, nil)
	m.assignment = string(resp.MemberAssignment)
}

func (m *groupMember) heartbeat() int16 {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 4
	req.Group, req.Generation, req.MemberID = m.group, m.generation, m.id
	return m.client.request(req).(*kmsg.HeartbeatResponse).ErrorCode
}

func (m *groupMember) commit(topic string, partition int32, offset int64) int16 {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 8
	req.Group, req.Generation, req.MemberID = m.group, m.generation, m.id
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition, rp.Offset, rp.LeaderEpoch = partition, offset, 0
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return m.client.request(req).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
}

// fetchOffsets fetches a group's committed offsets of topic's partitions.
func (c *testClient) fetchOffsets(group, topic string, partitions ...int32) []int64 {
	c.node.t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 8
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = group
	rt := kmsg.NewOffsetFetchRequestGroupTopic()
	rt.Topic, rt.Partitions = topic, partitions
	rg.Topics = append(rg.Topics, rt)
	req.Groups = append(req.Groups, rg)
	resp := c.request(req).(*kmsg.OffsetFetchResponse).Groups[0]
	requireNoError(c.node.t, "offset fetch", resp.ErrorCode, nil)
	var offsets []int64
	for _, p := range resp.Topics[0].Partitions {
		requireNoError(c.node.t, "offset fetch partition", p.ErrorCode, nil)
		offsets = append(offsets, p.Offset)
	}
	return offsets
}

func (c *testClient) describeGroup(group string) kmsg.DescribeGroupsResponseGroup {
	c.node.t.Helper()
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Version = 5
	req.Groups = []string{group}
	return c.request(req).(*kmsg.DescribeGroupsResponse).Groups[0]
}

func sortedStrings(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}

func TestFindCoordinatorCreatesTheOffsetsTopic(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	if _, exists := n.broker.image.Topics[metadata.ConsumerOffsetsTopic]; exists {
		t.Fatal("the offsets topic exists before any group needs it")
	}
	coordinators := c.findCoordinator(0, "orders-app", "billing")
	for _, coordinator := range coordinators {
		requireNoError(t, "find coordinator of "+coordinator.Key, coordinator.ErrorCode, coordinator.ErrorMessage)
		if coordinator.NodeID != 1 || coordinator.Host != "127.0.0.1" || coordinator.Port != 9092 {
			t.Fatalf("coordinator %+v", coordinator)
		}
	}
	if coordinators[0].Key != "orders-app" || coordinators[1].Key != "billing" {
		t.Fatalf("keys answered %q, %q", coordinators[0].Key, coordinators[1].Key)
	}
	topic := c.metadata(metadata.ConsumerOffsetsTopic).Topics[0]
	requireNoError(t, "offsets topic metadata", topic.ErrorCode, nil)
	if len(topic.Partitions) != 50 || !topic.IsInternal {
		t.Fatalf("offsets topic has %d partitions, internal %v", len(topic.Partitions), topic.IsInternal)
	}
	if got := n.broker.image.TopicConfigs(metadata.ConsumerOffsetsTopic)[metadata.ConfigCleanupPolicy]; got != "compact" {
		t.Fatalf("offsets topic cleanup.policy %q", got)
	}

	// v0 answers one key in the top-level fields.
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKey = "orders-app"
	v0 := c.request(req).(*kmsg.FindCoordinatorResponse)
	requireNoError(t, "find coordinator v0", v0.ErrorCode, nil)
	if v0.NodeID != 1 || v0.Host != "127.0.0.1" || v0.Port != 9092 {
		t.Fatalf("v0 answer %+v", v0)
	}

	// Transactions do not exist: a fatal error, not one to retry.
	txn := c.findCoordinator(1, "my-transactional-id")[0]
	requireError(t, "transaction coordinator", txn.ErrorCode, txn.ErrorMessage, kerr.TransactionalIDAuthorizationFailed)
	if txn.ErrorMessage == nil || txn.NodeID != -1 {
		t.Fatalf("transaction coordinator answer %+v", txn)
	}
}

func TestConsumerGroupRoundTripSurvivesRestart(t *testing.T) {
	config := DefaultConfig()
	n := newTestNode(t, config)
	admin := n.connect()
	admin.createTopic("orders", 2)
	requireNoError(t, "find coordinator", admin.findCoordinator(0, "app")[0].ErrorCode, nil)

	a, b := n.groupMember("app"), n.groupMember("app")
	joinA := a.startJoin()
	joinB := b.startJoin()
	a.joined(joinA)
	b.joined(joinB)
	if a.generation != 1 || a.leader != a.id || b.leader != a.id || len(a.members) != 2 || len(b.members) != 0 {
		t.Fatalf("a: generation %d leader %s members %d; b: leader %s members %d",
			a.generation, a.leader, len(a.members), b.leader, len(b.members))
	}
	syncB := b.client.send(b.syncRequest(nil))
	syncA := a.client.send(a.syncRequest(map[string]string{a.id: "orders-0", b.id: "orders-1"}))
	a.synced(syncA)
	b.synced(syncB)
	if a.assignment != "orders-0" || b.assignment != "orders-1" {
		t.Fatalf("assignments %q, %q", a.assignment, b.assignment)
	}
	requireNoError(t, "heartbeat", a.heartbeat(), nil)
	requireNoError(t, "a commits", a.commit("orders", 0, 17), nil)
	requireNoError(t, "b commits", b.commit("orders", 1, 4), nil)
	requireError(t, "commit to an unknown topic", a.commit("nope", 0, 1), nil, kerr.UnknownTopicOrPartition)
	if got := admin.fetchOffsets("app", "orders", 0, 1); !slices.Equal(got, []int64{17, 4}) {
		t.Fatalf("committed offsets %v", got)
	}

	// A crash right after the acknowledgements loses none of it: the
	// offsets and the group's last assignment are replayed from
	// __consumer_offsets.
	n.restart()
	admin = n.connect()
	var described kmsg.DescribeGroupsResponseGroup
	for {
		described = admin.describeGroup("app")
		if described.ErrorCode != kerr.CoordinatorLoadInProgress.Code {
			break
		}
		n.run(10 * time.Millisecond)
	}
	requireNoError(t, "describe after restart", described.ErrorCode, nil)
	if described.State != "Stable" || described.Protocol != "range" || len(described.Members) != 2 {
		t.Fatalf("described after restart: %+v", described)
	}
	assigned := map[string]string{}
	for _, m := range described.Members {
		assigned[m.MemberID] = string(m.MemberAssignment)
	}
	if assigned[a.id] != "orders-0" || assigned[b.id] != "orders-1" {
		t.Fatalf("assignments after restart: %v", assigned)
	}
	if got := admin.fetchOffsets("app", "orders", 0, 1); !slices.Equal(got, []int64{17, 4}) {
		t.Fatalf("committed offsets after restart %v", got)
	}
	// The members carry on in their generation on new connections.
	a.client, b.client = n.connect(), n.connect()
	requireNoError(t, "heartbeat after restart", a.heartbeat(), nil)
	requireNoError(t, "commit after restart", a.commit("orders", 0, 18), nil)
	if got := admin.fetchOffsets("app", "orders", 0); got[0] != 18 {
		t.Fatalf("offset after restart's commit %d", got[0])
	}
}

func TestGroupRequestsForAnotherCoordinatorsGroup(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	// Before the offsets topic exists this node leads none of its
	// partitions: clients are sent to find the coordinator.
	m := n.groupMember("app")
	resp := c.request(m.joinRequest()).(*kmsg.JoinGroupResponse)
	requireError(t, "join before the offsets topic exists", resp.ErrorCode, nil, kerr.NotCoordinator)
	if group.PartitionFor("app", 50) != n.broker.groups.coordinator.PartitionFor("app") {
		t.Fatal("broker and coordinator disagree on the group's partition")
	}
}

// A group's committed offsets of a deleted topic go with it, as in Kafka:
// a topic created again under the name is a new topic, and a group
// resuming it from the old offsets would skip its first records. The
// group's offsets of other topics stay, through a restart too.
func TestDeletingATopicDeletesTheGroupsOffsetsOfIt(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	admin := n.connect()
	orders := admin.createTopic("orders", 2)
	admin.createTopic("audit", 1)
	requireNoError(t, "find coordinator", admin.findCoordinator(0, "app")[0].ErrorCode, nil)
	m := n.groupMember("app")
	m.joined(m.startJoin())
	m.synced(m.client.send(m.syncRequest(map[string]string{m.id: "orders"})))
	requireNoError(t, "commit orders-0", m.commit("orders", 0, 17), nil)
	requireNoError(t, "commit orders-1", m.commit("orders", 1, 4), nil)
	requireNoError(t, "commit audit-0", m.commit("audit", 0, 9), nil)

	deleted := admin.deleteTopicByID(orders.TopicID)
	requireNoError(t, "delete orders", deleted.ErrorCode, deleted.ErrorMessage)
	n.run(settleTime) // the tombstones commit
	admin.createTopic("orders", 2)
	if got := admin.fetchOffsets("app", "orders", 0, 1); !slices.Equal(got, []int64{-1, -1}) {
		t.Fatalf("the re-created topic's committed offsets %v, want none (-1)", got)
	}
	if got := admin.fetchOffsets("app", "audit", 0); !slices.Equal(got, []int64{9}) {
		t.Fatalf("another topic's committed offset %v, want 9", got)
	}

	// The deletion is in __consumer_offsets: a restart replays it.
	n.restart()
	admin = n.connect()
	for admin.describeGroup("app").ErrorCode == kerr.CoordinatorLoadInProgress.Code {
		n.run(10 * time.Millisecond)
	}
	if got := admin.fetchOffsets("app", "orders", 0, 1); !slices.Equal(got, []int64{-1, -1}) {
		t.Fatalf("after a restart the re-created topic's committed offsets %v, want none (-1)", got)
	}
	if got := admin.fetchOffsets("app", "audit", 0); !slices.Equal(got, []int64{9}) {
		t.Fatalf("after a restart another topic's committed offset %v, want 9", got)
	}
}
