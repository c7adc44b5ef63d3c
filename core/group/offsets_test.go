package group

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestCommitRules(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	// Without membership (generation -1, no member id): allowed while the
	// group does not exist (it is created) or has no members.
	requireCode(t, "simple commit", tc.commitCode("simple", "", -1, "orders", 0, 10), nil)
	if got := tc.fetch("simple", "orders", 0); got != 10 {
		t.Fatalf("fetched %d, want 10", got)
	}
	tc.requireState("simple", stateEmpty)
	requireCode(t, "a generation of a group that does not exist",
		tc.commitCode("ghost", "m", 3, "orders", 0, 1), kerr.IllegalGeneration)
	if tc.group("ghost") != nil {
		t.Fatal("a refused commit created a group")
	}

	members := tc.stableGroup("g", "a", "b")
	a := members[0]
	requireCode(t, "member commit", tc.commitCode("g", a.id, a.generation, "orders", 1, 42), nil)
	if got := tc.fetch("g", "orders", 1); got != 42 {
		t.Fatalf("fetched %d, want 42", got)
	}
	requireCode(t, "commit without membership to a group with members",
		tc.commitCode("g", "", -1, "orders", 1, 1), kerr.UnknownMemberID)
	requireCode(t, "commit from an old generation",
		tc.commitCode("g", a.id, a.generation-1, "orders", 1, 1), kerr.IllegalGeneration)
	requireCode(t, "commit from an unknown member",
		tc.commitCode("g", "stranger", a.generation, "orders", 1, 1), kerr.UnknownMemberID)
	requireCode(t, "commit to a topic the cluster does not have",
		tc.commitCode("g", a.id, a.generation, "nope", 0, 1), kerr.UnknownTopicOrPartition)
	requireCode(t, "commit to a partition the topic does not have",
		tc.commitCode("g", a.id, a.generation, "orders", 3, 1), kerr.UnknownTopicOrPartition)
	if got := tc.fetch("g", "orders", 1); got != 42 {
		t.Fatalf("refused commits changed the offset to %d", got)
	}

	// While the group waits for its assignment, members may not commit.
	c, joinC := tc.joinNew("g", "c")
	joinA := tc.join(joinSpec{group: "g", clientID: "a", memberID: a.id})
	joinB := tc.join(joinSpec{group: "g", clientID: "b", memberID: members[1].id})
	a.joined(t, joinA.require(t, "a"))
	members[1].joined(t, joinB.require(t, "b"))
	c.joined(t, joinC.require(t, "c"))
	tc.requireState("g", stateCompletingRebalance)
	requireCode(t, "commit while completing the rebalance",
		tc.commitCode("g", a.id, a.generation, "orders", 1, 1), kerr.RebalanceInProgress)
}

func TestCommitMetadataLimit(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 8
	req.Group = "g"
	req.Generation = -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "orders"
	// The limit counts Java characters (UTF-16 code units), as Kafka
	// does: "é" is two bytes and one character, "😀" four bytes and two.
	for partition, metadata := range []string{
		strings.Repeat("m", 4096), strings.Repeat("m", 4097),
		strings.Repeat("é", 3000), strings.Repeat("😀", 2048), strings.Repeat("😀", 2048) + "m",
	} {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition = int32(partition)
		rp.Offset = 5
		rp.Metadata = &metadata
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	tc.topics["orders"] = 5
	a := &answer[*kmsg.OffsetCommitResponse]{}
	tc.c.OffsetCommit(req, commitResponder(a.done))
	tc.settle()
	answers := a.require(t, "commit").Topics[0].Partitions
	requireCode(t, "metadata at the limit", answers[0].ErrorCode, nil)
	requireCode(t, "metadata over the limit", answers[1].ErrorCode, kerr.OffsetMetadataTooLarge)
	requireCode(t, "3000 two-byte characters", answers[2].ErrorCode, nil)
	requireCode(t, "2048 surrogate pairs, at the limit", answers[3].ErrorCode, nil)
	requireCode(t, "one character past them", answers[4].ErrorCode, kerr.OffsetMetadataTooLarge)
	for partition, want := range []int64{5, -1, 5, 5, -1} {
		if got := tc.fetch("g", "orders", int32(partition)); got != want {
			t.Fatalf("orders-%d's offset is %d, want %d", partition, got, want)
		}
	}
}

func TestCommitIsAnsweredAndVisibleOnlyOnceCommitted(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	tc.log.autoCommit = false
	commit := tc.commit("g", "", -1, "orders", 0, 7)
	tc.run(time.Second)
	commit.requirePending(t, "commit before its record committed")
	if got := tc.fetch("g", "orders", 0); got != -1 {
		t.Fatalf("a pending commit is visible: %d", got)
	}
	tc.log.commit(0)
	requireCode(t, "commit", commit.require(t, "commit").Topics[0].Partitions[0].ErrorCode, nil)
	if got := tc.fetch("g", "orders", 0); got != 7 {
		t.Fatalf("fetched %d, want 7", got)
	}
}

func TestCommitTimeoutThenLateCommitCounts(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	tc.log.autoCommit = false
	commit := tc.commit("g", "", -1, "orders", 0, 7)
	tc.run(tc.config.OffsetCommitTimeout)
	requireCode(t, "commit", commit.require(t, "commit").Topics[0].Partitions[0].ErrorCode, kerr.RequestTimedOut)
	// The record commits after all: from then on it is the offset, as a
	// replay of the log would say.
	tc.log.commit(0)
	if got := tc.fetch("g", "orders", 0); got != 7 {
		t.Fatalf("fetched %d, want 7", got)
	}
	if commit.count != 1 {
		t.Fatal("the timed-out commit was answered again")
	}
}

func TestCommitWriteFailures(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	tc.log.refuse = kerr.NotEnoughReplicas
	requireCode(t, "commit refused for lack of replicas",
		tc.commitCode("g", "", -1, "orders", 0, 1), kerr.CoordinatorNotAvailable)
	tc.log.refuse = kerr.MessageTooLarge
	requireCode(t, "commit refused as too large",
		tc.commitCode("g", "", -1, "orders", 0, 1), kerr.InvalidCommitOffsetSize)
	tc.log.refuse = nil
	tc.log.autoCommit = false
	commit := tc.commit("g", "", -1, "orders", 0, 1)
	tc.log.fail(0, kerr.NotLeaderForPartition)
	requireCode(t, "commit whose leader moved",
		commit.require(t, "commit").Topics[0].Partitions[0].ErrorCode, kerr.NotCoordinator)
	if got := tc.fetch("g", "orders", 0); got != -1 {
		t.Fatalf("a failed commit is visible: %d", got)
	}
}

func TestCommitFromFencedStaticMember(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	members := tc.staticGroup("g", 10*time.Second, "a")
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 8
	req.Group = "g"
	req.MemberID = "an-older-incarnation"
	req.Generation = members[0].generation
	instance := "i-a"
	req.InstanceID = &instance
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "orders"
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	a := &answer[*kmsg.OffsetCommitResponse]{}
	tc.c.OffsetCommit(req, commitResponder(a.done))
	requireCode(t, "fenced commit", a.require(t, "commit").Topics[0].Partitions[0].ErrorCode, kerr.FencedInstanceID)
}

func TestRestartRebuildsGroupsAndOffsetsFromTheLog(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	members := tc.stableGroup("g", "a", "b")
	a, b := members[0], members[1]
	requireCode(t, "commit", tc.commitCode("g", a.id, a.generation, "orders", 0, 100), nil)
	requireCode(t, "commit", tc.commitCode("g", b.id, b.generation, "orders", 1, 200), nil)
	requireCode(t, "commit", tc.commitCode("g", a.id, a.generation, "orders", 0, 150), nil)
	requireCode(t, "simple commit", tc.commitCode("simple", "", -1, "payments", 1, 9), nil)

	tc.restart()

	tc.requireState("g", stateStable)
	tc.requireMembers("g", a.id, b.id)
	g := tc.group("g")
	if g.generation != 1 || g.leaderID != a.id || g.protocolName != "range" || g.protocolType != "consumer" {
		t.Fatalf("reloaded group: generation %d leader %s protocol %s/%s", g.generation, g.leaderID, g.protocolType, g.protocolName)
	}
	if got := tc.fetch("g", "orders", 0); got != 150 {
		t.Fatalf("orders-0: %d, want the later commit 150", got)
	}
	if got := tc.fetch("g", "orders", 1); got != 200 {
		t.Fatalf("orders-1: %d", got)
	}
	if got := tc.fetch("simple", "payments", 1); got != 9 {
		t.Fatalf("simple group: %d", got)
	}
	tc.requireState("simple", stateEmpty)
	// The members carry on in their generation: a stable group answers a
	// sync with the assignment it persisted.
	b.synced(t, tc.sync(b, nil).require(t, "sync after the restart"))
	if string(b.assignment) != "assignment-b" {
		t.Fatalf("b's assignment after the restart: %q", b.assignment)
	}
	requireCode(t, "heartbeat after the restart", tc.heartbeat(a), nil)
	// A member that does not come back expires with its session.
	tc.run(6 * time.Second)
	requireCode(t, "heartbeat after the restart", tc.heartbeat(a), nil)
	tc.run(5 * time.Second)
	tc.requireState("g", statePreparingRebalance)
	tc.requireMembers("g", a.id)
}

func TestDeleteGroupsTombstonesGroupAndOffsets(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	requireCode(t, "commit", tc.commitCode("gone", "", -1, "orders", 0, 1), nil)
	requireCode(t, "commit", tc.commitCode("gone", "", -1, "orders", 1, 2), nil)
	busy := tc.stableGroup("busy", "a")

	req := kmsg.NewPtrDeleteGroupsRequest()
	req.Version = 2
	req.Groups = []string{"gone", "busy", "never", "gone"}
	a := &answer[*kmsg.DeleteGroupsResponse]{}
	tc.c.DeleteGroups(req, a.done)
	a.requirePending(t, "delete before the tombstones commit")
	tc.requireState("gone", stateDead)
	tc.settle()
	resp := a.require(t, "delete")
	if len(resp.Groups) != 3 {
		t.Fatalf("answered %d groups, want 3 (one per distinct group)", len(resp.Groups))
	}
	requireCode(t, "deleting an empty group", resp.Groups[0].ErrorCode, nil)
	requireCode(t, "deleting a group with members", resp.Groups[1].ErrorCode, kerr.NonEmptyGroup)
	requireCode(t, "deleting a group that does not exist", resp.Groups[2].ErrorCode, kerr.GroupIDNotFound)
	if tc.group("gone") != nil {
		t.Fatal("the deleted group is still there")
	}
	if got := tc.fetch("gone", "orders", 0); got != -1 {
		t.Fatalf("the deleted group's offset: %d", got)
	}
	tc.requireState("busy", stateStable)
	_ = busy

	tc.restart()
	if tc.group("gone") != nil {
		t.Fatal("the deleted group came back after a restart")
	}
	if got := tc.fetch("gone", "orders", 1); got != -1 {
		t.Fatalf("the deleted group's offset came back: %d", got)
	}
}

func TestOffsetDelete(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	requireCode(t, "commit", tc.commitCode("g", "", -1, "orders", 0, 1), nil)
	requireCode(t, "commit", tc.commitCode("g", "", -1, "orders", 1, 2), nil)
	offsetDelete := func(group string, partitions ...int32) *kmsg.OffsetDeleteResponse {
		req := kmsg.NewPtrOffsetDeleteRequest()
		req.Group = group
		rt := kmsg.NewOffsetDeleteRequestTopic()
		rt.Topic = "orders"
		for _, p := range partitions {
			rp := kmsg.NewOffsetDeleteRequestTopicPartition()
			rp.Partition = p
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		a := &answer[*kmsg.OffsetDeleteResponse]{}
		tc.c.OffsetDelete(req, a.done)
		tc.settle()
		return a.require(t, "offset delete")
	}
	resp := offsetDelete("g", 0)
	requireCode(t, "offset delete", resp.ErrorCode, nil)
	requireCode(t, "orders-0", resp.Topics[0].Partitions[0].ErrorCode, nil)
	if tc.fetch("g", "orders", 0) != -1 || tc.fetch("g", "orders", 1) != 2 {
		t.Fatal("offsets after deleting orders-0 are wrong")
	}
	requireCode(t, "unknown group", offsetDelete("nope", 0).ErrorCode, kerr.GroupIDNotFound)

	// A partition the cluster does not have is refused, as Kafka's broker
	// refuses it, beside one deleted.
	resp = offsetDelete("g", 7, 1)
	requireCode(t, "offset delete", resp.ErrorCode, nil)
	requireCode(t, "orders-7", resp.Topics[0].Partitions[0].ErrorCode, kerr.UnknownTopicOrPartition)
	requireCode(t, "orders-1", resp.Topics[0].Partitions[1].ErrorCode, nil)
	if tc.fetch("g", "orders", 1) != -1 {
		t.Fatal("orders-1's offset survived its deletion beside an unknown partition")
	}
	requireCode(t, "commit", tc.commitCode("g", "", -1, "orders", 1, 2), nil)

	// A consumer group keeps the offsets of topics it subscribes to.
	tc.stableGroup("consumers", "a")
	member := tc.group("consumers").members[0]
	member.protocols[0].metadata = (&kmsg.ConsumerMemberMetadata{Topics: []string{"orders"}}).AppendTo(nil)
	tc.group("consumers").subscribedTopics = tc.group("consumers").computeSubscribedTopics()
	resp = offsetDelete("consumers", 0)
	requireCode(t, "subscribed topic", resp.Topics[0].Partitions[0].ErrorCode, kerr.GroupSubscribedToTopic)

	tc.restart()
	if tc.fetch("g", "orders", 0) != -1 || tc.fetch("g", "orders", 1) != 2 {
		t.Fatal("the deleted offset came back after a restart")
	}
}

// commitWithRetention commits offset to orders-partition for a group with
// no members, by an OffsetCommit of the given version carrying retention
// (v2-v4's RetentionTimeMillis; ignored from v5, which lacks it).
func commitWithRetention(t *testing.T, tc *testCoordinator, version int16, group string, partition int32, offset int64, retention time.Duration) {
	t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = version
	req.Group = group
	req.Generation = -1
	req.RetentionTimeMillis = retention.Milliseconds()
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = "orders"
	rp := kmsg.NewOffsetCommitRequestTopicPartition()
	rp.Partition = partition
	rp.Offset = offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	a := &answer[*kmsg.OffsetCommitResponse]{}
	tc.c.OffsetCommit(req, commitResponder(a.done))
	tc.settle()
	requireCode(t, "commit", a.require(t, "commit").Topics[0].Partitions[0].ErrorCode, nil)
}

// An OffsetCommit v2-v4 that names a retention time has its offsets kept
// that long, longer or shorter than offsets.retention.minutes, across a
// coordinator's restart (the expire timestamp is in the record); -1, or
// a v5 request, leaves the broker's retention in force.
func TestCommitRetentionTimeSetsWhenOffsetsExpire(t *testing.T) {
	config := testConfig()
	config.OffsetsRetention = 7 * 24 * time.Hour
	config.OffsetsRetentionCheckInterval = time.Hour
	tc := newTestCoordinator(t, config)
	commitWithRetention(t, tc, 2, "long", 0, 10, 30*24*time.Hour)
	commitWithRetention(t, tc, 4, "short", 0, 20, 2*time.Hour)
	commitWithRetention(t, tc, 3, "default", 0, 30, -time.Millisecond) // -1: the broker's
	commitWithRetention(t, tc, 5, "v5", 0, 40, 30*24*time.Hour)        // v5 has no such field

	tc.run(3 * time.Hour)
	if tc.fetch("short", "orders", 0) != -1 {
		t.Fatal("an offset committed with a 2-hour retention outlived it")
	}
	if tc.fetch("long", "orders", 0) != 10 || tc.fetch("default", "orders", 0) != 30 || tc.fetch("v5", "orders", 0) != 40 {
		t.Fatal("offsets expired before their retention")
	}
	tc.restart()
	tc.run(8*24*time.Hour - 3*time.Hour) // 8 days in all
	if got := tc.fetch("long", "orders", 0); got != 10 {
		t.Fatalf("the offset committed with a 30-day retention is %d after 8 days and a restart, want 10", got)
	}
	if tc.fetch("default", "orders", 0) != -1 || tc.fetch("v5", "orders", 0) != -1 {
		t.Fatal("offsets under offsets.retention.minutes outlived its 7 days")
	}
	tc.run(23 * 24 * time.Hour) // 31 days
	if tc.fetch("long", "orders", 0) != -1 {
		t.Fatal("the offset committed with a 30-day retention outlived it")
	}
}

func TestExpireAtSaturates(t *testing.T) {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 2
	for _, c := range []struct {
		retention, now, want int64
	}{
		{-1, 1000, 0},
		{500, 1000, 1500},
		{math.MaxInt64, 1000, math.MaxInt64},
		{-5000, 1000, 1},
	} {
		req.RetentionTimeMillis = c.retention
		if got := expireAt(req, c.now); got != c.want {
			t.Errorf("retention %d at %d: expire at %d, want %d", c.retention, c.now, got, c.want)
		}
	}
	req.Version, req.RetentionTimeMillis = 5, 500
	if got := expireAt(req, 1000); got != 0 {
		t.Errorf("a v5 commit expires at %d, want 0 (none)", got)
	}
}

func TestOffsetsExpireAfterRetention(t *testing.T) {
	config := testConfig()
	config.OffsetsRetention = time.Hour
	config.OffsetsRetentionCheckInterval = 10 * time.Minute
	tc := newTestCoordinator(t, config)
	requireCode(t, "commit", tc.commitCode("simple", "", -1, "orders", 0, 1), nil)
	tc.run(30 * time.Minute)
	requireCode(t, "commit", tc.commitCode("simple", "", -1, "orders", 1, 2), nil)
	tc.run(40 * time.Minute) // orders-0 is 70 minutes old, orders-1 40
	if tc.fetch("simple", "orders", 0) != -1 || tc.fetch("simple", "orders", 1) != 2 {
		t.Fatal("only orders-0 should have expired")
	}
	tc.run(30 * time.Minute)
	if tc.group("simple") != nil {
		t.Fatal("an empty group without offsets should be deleted")
	}
	tc.restart()
	if tc.group("simple") != nil || tc.fetch("simple", "orders", 1) != -1 {
		t.Fatal("expired offsets came back after a restart")
	}
}

func TestOffsetFetchVersions(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	requireCode(t, "commit", tc.commitCode("g", "", -1, "orders", 2, 20), nil)
	requireCode(t, "commit", tc.commitCode("g", "", -1, "orders", 0, 5), nil)
	requireCode(t, "commit", tc.commitCode("g", "", -1, "payments", 1, 7), nil)

	// v2+: no topics means every committed offset, sorted.
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 7
	req.Group = "g"
	resp := tc.c.OffsetFetch(req)
	var got []string
	for _, topic := range resp.Topics {
		for _, p := range topic.Partitions {
			got = append(got, topic.Topic+"-"+string(rune('0'+p.Partition))+"="+string(rune('0'+p.Offset%10)))
			if p.LeaderEpoch != 7 || p.Metadata == nil || *p.Metadata != "meta" {
				t.Fatalf("fetched partition %+v", p)
			}
		}
	}
	if strings.Join(got, " ") != "orders-0=5 orders-2=0 payments-1=7" {
		t.Fatalf("all offsets: %v", got)
	}

	// A group this node does not coordinate: v1 says so per partition,
	// v2-v7 once for the request, v8 per group.
	tc.c.Unload(0)
	v1 := kmsg.NewPtrOffsetFetchRequest()
	v1.Version = 1
	v1.Group = "g"
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic = "orders"
	rt.Partitions = []int32{0, 1}
	v1.Topics = append(v1.Topics, rt)
	resp = tc.c.OffsetFetch(v1)
	if len(resp.Topics[0].Partitions) != 2 {
		t.Fatalf("v1 answer %+v", resp)
	}
	for _, p := range resp.Topics[0].Partitions {
		requireCode(t, "v1 partition", p.ErrorCode, kerr.NotCoordinator)
		if p.Offset != -1 {
			t.Fatalf("v1 partition offset %d", p.Offset)
		}
	}
	v1.Version = 5
	resp = tc.c.OffsetFetch(v1)
	requireCode(t, "v5", resp.ErrorCode, kerr.NotCoordinator)
	if len(resp.Topics) != 0 {
		t.Fatalf("v5 error answer has topics: %+v", resp.Topics)
	}
}

func TestListAndDescribeGroups(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	requireCode(t, "commit", tc.commitCode("simple", "", -1, "orders", 0, 1), nil)
	tc.stableGroup("consumers", "a")
	req := kmsg.NewPtrListGroupsRequest()
	req.Version = 4
	resp := tc.c.ListGroups(req)
	requireCode(t, "list", resp.ErrorCode, nil)
	if len(resp.Groups) != 2 || resp.Groups[0].Group != "consumers" || resp.Groups[0].GroupState != "Stable" ||
		resp.Groups[0].ProtocolType != "consumer" || resp.Groups[1].Group != "simple" || resp.Groups[1].GroupState != "Empty" {
		t.Fatalf("listed %+v", resp.Groups)
	}
	req.StatesFilter = []string{"empty"}
	resp = tc.c.ListGroups(req)
	if len(resp.Groups) != 1 || resp.Groups[0].Group != "simple" {
		t.Fatalf("listed with filter %+v", resp.Groups)
	}
	described := tc.describe("unknown")
	requireCode(t, "describe unknown", described.ErrorCode, nil)
	if described.State != "Dead" || len(described.Members) != 0 {
		t.Fatalf("described unknown %+v", described)
	}
	described = tc.describe("consumers")
	if described.Members[0].ClientID != "a" || described.Members[0].ClientHost != "/10.0.0.1" {
		t.Fatalf("described member %+v", described.Members[0])
	}
}

func TestCanaryStaleGenerationCommit(t *testing.T) {
	for _, planted := range []bool{false, true} {
		var canaries []string
		if planted {
			canaries = []string{CanaryStaleGenerationCommit}
		}
		tc := newTestCoordinator(t, testConfig(), canaries...)
		members := tc.stableGroup("g", "a", "b")
		tc.leave("g", members[1])
		join := tc.join(joinSpec{group: "g", clientID: "a", memberID: members[0].id})
		members[0].joined(t, join.require(t, "rejoin"))
		sync := tc.sync(members[0], map[string]string{members[0].id: "everything"})
		tc.settle()
		members[0].synced(t, sync.require(t, "sync"))
		// b, removed in generation 1, commits as if nothing happened.
		code := tc.commitCode("g", members[1].id, 1, "orders", 0, 99)
		if planted {
			requireCode(t, "stale commit with the canary", code, nil)
		} else {
			requireCode(t, "stale commit", code, kerr.UnknownMemberID)
		}
	}
}

func TestCanaryCommitBeforeDurable(t *testing.T) {
	for _, planted := range []bool{false, true} {
		var canaries []string
		if planted {
			canaries = []string{CanaryCommitBeforeDurable}
		}
		tc := newTestCoordinator(t, testConfig(), canaries...)
		tc.log.autoCommit = false
		commit := tc.commit("g", "", -1, "orders", 0, 5)
		if planted {
			requireCode(t, "commit with the canary", commit.require(t, "commit").Topics[0].Partitions[0].ErrorCode, nil)
			// A crash now loses the acknowledged commit.
			tc.log.loseUncommitted()
			tc.restart()
			if got := tc.fetch("g", "orders", 0); got != -1 {
				t.Fatalf("fetched %d after the crash", got)
			}
		} else {
			commit.requirePending(t, "commit before it is durable")
		}
	}
}
