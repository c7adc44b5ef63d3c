package group

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
)

func TestPartitionForMatchesJavaHashCode(t *testing.T) {
	cases := []struct {
		group      string
		partitions int32
		want       int32
	}{
		{"", 50, 0},
		{"a", 50, 97 % 50},
		{"ab", 50, (97*31 + 98) % 50},
		{"hello", 50, 99162322 % 50},
		// Java's "polygenelubricants".hashCode() is Integer.MIN_VALUE;
		// Kafka's abs (n & 0x7fffffff) makes it 0, not negative.
		{"polygenelubricants", 50, 0},
		// U+1F600 is two UTF-16 code units, 0xD83D and 0xDE00.
		{"\U0001F600", 1 << 30, 0xD83D*31 + 0xDE00},
		// "é" is one code unit, 0xE9, whatever its UTF-8 length.
		{"é", 1000, 0xE9},
	}
	for _, c := range cases {
		if got := PartitionFor(c.group, c.partitions); got != c.want {
			t.Errorf("PartitionFor(%q, %d) = %d, want %d", c.group, c.partitions, got, c.want)
		}
	}
}

func TestOneMemberJoinsSyncsAndHeartbeats(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	m, join := tc.joinNew("g", "client")
	tc.requireState("g", statePreparingRebalance)
	// The first rebalance of an empty group waits the initial delay.
	tc.run(tc.config.InitialRebalanceDelay - time.Millisecond)
	join.requirePending(t, "join during the initial delay")
	tc.run(time.Millisecond)
	resp := join.require(t, "join")
	m.joined(t, resp)
	if m.generation != 1 || m.leader != m.id || resp.Protocol == nil || *resp.Protocol != "range" ||
		resp.ProtocolType == nil || *resp.ProtocolType != "consumer" {
		t.Fatalf("join answer %+v", resp)
	}
	if got := memberIDs(m.members); !slices.Equal(got, []string{m.id}) {
		t.Fatalf("leader got members %v", got)
	}
	if !bytes.Equal(m.members[0].ProtocolMetadata, []byte("meta-range-client")) {
		t.Fatalf("leader got metadata %q", m.members[0].ProtocolMetadata)
	}
	tc.requireState("g", stateCompletingRebalance)

	sync := tc.sync(m, map[string]string{m.id: "all partitions"})
	sync.requirePending(t, "sync before the assignment is committed")
	tc.settle()
	m.synced(t, sync.require(t, "sync"))
	if string(m.assignment) != "all partitions" {
		t.Fatalf("assignment %q", m.assignment)
	}
	tc.requireState("g", stateStable)
	requireCode(t, "heartbeat", tc.heartbeat(m), nil)

	// The generation is in the log: one GroupMetadata record holding the
	// member and its assignment.
	records := tc.log.records(t, 0)
	if len(records) != 1 || records[0].isOffset || records[0].metadata == nil {
		t.Fatalf("log holds %+v", records)
	}
	value := records[0].metadata
	if value.Generation != 1 || *value.Protocol != "range" || *value.Leader != m.id || len(value.Members) != 1 ||
		value.Members[0].MemberID != m.id || string(value.Members[0].Assignment) != "all partitions" ||
		string(value.Members[0].Subscription) != "meta-range-client" || value.Members[0].ClientID != "client" {
		t.Fatalf("group metadata %+v", value)
	}
	described := tc.describe("g")
	if described.State != "Stable" || described.Protocol != "range" || len(described.Members) != 1 ||
		string(described.Members[0].MemberAssignment) != "all partitions" {
		t.Fatalf("described %+v", described)
	}
}

func TestThreeMembersShareOneGeneration(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	members := tc.stableGroup("g", "a", "b", "c")
	for _, m := range members {
		if m.generation != 1 || m.leader != members[0].id {
			t.Fatalf("%s: generation %d leader %s", m.clientID, m.generation, m.leader)
		}
	}
	if got, want := memberIDs(members[0].members), []string{members[0].id, members[1].id, members[2].id}; !slices.Equal(got, want) {
		t.Fatalf("leader got members %v, want %v", got, want)
	}
	for _, m := range members[1:] {
		if len(m.members) != 0 {
			t.Fatalf("follower %s got a member list", m.clientID)
		}
	}
	// A follower syncing after the group is stable gets its part at once.
	late := tc.sync(members[2], nil)
	members[2].synced(t, late.require(t, "late sync"))
	if string(members[2].assignment) != "assignment-c" {
		t.Fatalf("late sync got %q", members[2].assignment)
	}
}

func TestMemberIDRequiredOnlyFromVersion4(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	first := tc.join(joinSpec{group: "g", clientID: "new"}).require(t, "v7 join")
	requireCode(t, "v7 join without member id", first.ErrorCode, kerr.MemberIDRequired)
	if first.Generation != -1 || first.MemberID == "" {
		t.Fatalf("answer %+v", first)
	}
	if !tc.group("g").isPending(first.MemberID) {
		t.Fatal("the handed-out id is not pending")
	}
	// A pending id that is never used is forgotten after the session
	// timeout, and the rebalance no longer waits for it.
	tc.run(10 * time.Second)
	if tc.group("g").isPending(first.MemberID) {
		t.Fatal("the pending id outlived its session timeout")
	}

	old := tc.join(joinSpec{group: "old", clientID: "legacy", version: 3})
	tc.run(tc.config.InitialRebalanceDelay)
	resp := old.require(t, "v3 join")
	requireCode(t, "v3 join", resp.ErrorCode, nil)
	if resp.Generation != 1 || resp.LeaderID != resp.MemberID {
		t.Fatalf("v3 join answer %+v", resp)
	}
}

func TestJoiningMemberRebalancesStableGroup(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	members := tc.stableGroup("g", "a", "b")
	c, joinC := tc.joinNew("g", "c")
	tc.requireState("g", statePreparingRebalance)
	for _, m := range members {
		requireCode(t, "heartbeat during rebalance", tc.heartbeat(m), kerr.RebalanceInProgress)
	}
	joinA := tc.join(joinSpec{group: "g", clientID: "a", memberID: members[0].id})
	joinC.requirePending(t, "join before everyone rejoined")
	joinB := tc.join(joinSpec{group: "g", clientID: "b", memberID: members[1].id})
	// Everyone rejoined: the rebalance completes without waiting.
	members[0].joined(t, joinA.require(t, "a's rejoin"))
	members[1].joined(t, joinB.require(t, "b's rejoin"))
	c.joined(t, joinC.require(t, "c's join"))
	if members[0].generation != 2 || c.generation != 2 || c.leader != members[0].id {
		t.Fatalf("generation %d/%d, leader %s", members[0].generation, c.generation, c.leader)
	}
	if got := memberIDs(members[0].members); !slices.Equal(got, []string{members[0].id, members[1].id, c.id}) {
		t.Fatalf("leader got %v", got)
	}
}

func TestLeavingMemberRebalancesGroup(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	members := tc.stableGroup("g", "a", "b")
	resp := tc.leave("g", members[0])
	requireCode(t, "leave", resp.ErrorCode, nil)
	if len(resp.Members) != 1 || resp.Members[0].MemberID != members[0].id || resp.Members[0].ErrorCode != 0 {
		t.Fatalf("leave answer %+v", resp)
	}
	tc.requireState("g", statePreparingRebalance)
	tc.requireMembers("g", members[1].id)
	requireCode(t, "heartbeat of b", tc.heartbeat(members[1]), kerr.RebalanceInProgress)
	join := tc.join(joinSpec{group: "g", clientID: "b", memberID: members[1].id})
	members[1].joined(t, join.require(t, "b's rejoin"))
	if members[1].generation != 2 || members[1].leader != members[1].id {
		t.Fatalf("b: generation %d leader %s", members[1].generation, members[1].leader)
	}
	requireCode(t, "heartbeat of the member that left", tc.heartbeat(members[0]), kerr.UnknownMemberID)

	// The last member leaving empties the group, which is persisted.
	tc.leave("g", members[1])
	tc.settle()
	tc.requireState("g", stateEmpty)
	if g := tc.group("g"); g.generation != 3 {
		t.Fatalf("empty group at generation %d, want 3", g.generation)
	}
	records := tc.log.records(t, 0)
	last := records[len(records)-1]
	if last.metadata == nil || last.metadata.Generation != 3 || len(last.metadata.Members) != 0 {
		t.Fatalf("last record %+v", last)
	}
}

func TestSessionExpiryRemovesSilentMember(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	members := tc.stableGroup("g", "a", "b")
	// a heartbeats every 3 s; b never does. Sessions are 10 s.
	for range 3 {
		tc.run(3 * time.Second)
		requireCode(t, "a's heartbeat", tc.heartbeat(members[0]), nil)
	}
	tc.run(2 * time.Second) // b's session (10 s) has expired
	tc.requireState("g", statePreparingRebalance)
	tc.requireMembers("g", members[0].id)
	requireCode(t, "a's heartbeat", tc.heartbeat(members[0]), kerr.RebalanceInProgress)
	join := tc.join(joinSpec{group: "g", clientID: "a", memberID: members[0].id})
	members[0].joined(t, join.require(t, "a's rejoin"))
	if members[0].generation != 2 || len(members[0].members) != 1 {
		t.Fatalf("a: generation %d, members %v", members[0].generation, memberIDs(members[0].members))
	}
}

func TestRebalanceTimeoutEvictsMemberThatDoesNotRejoin(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	members := tc.stableGroup("g", "a", "b")
	// The leader rejoins (say its topics' metadata changed); b keeps
	// heartbeating but never rejoins.
	join := tc.join(joinSpec{group: "g", clientID: "a", memberID: members[0].id})
	tc.requireState("g", statePreparingRebalance)
	for range 9 {
		tc.run(3 * time.Second)
		requireCode(t, "b's heartbeat", tc.heartbeat(members[1]), kerr.RebalanceInProgress)
	}
	join.requirePending(t, "join before the rebalance timeout")
	tc.run(3 * time.Second) // 30 s: the rebalance timeout
	members[0].joined(t, join.require(t, "a's rejoin"))
	if members[0].generation != 2 || len(members[0].members) != 1 {
		t.Fatalf("a: generation %d, members %v", members[0].generation, memberIDs(members[0].members))
	}
	tc.requireMembers("g", members[0].id)
	requireCode(t, "b's heartbeat", tc.heartbeat(members[1]), kerr.UnknownMemberID)
}

func TestMemberThatDoesNotSyncIsRemoved(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	a, joinA := tc.joinNew("g", "a")
	b, joinB := tc.joinNew("g", "b")
	tc.run(2 * tc.config.InitialRebalanceDelay)
	a.joined(t, joinA.require(t, "a"))
	b.joined(t, joinB.require(t, "b"))
	sync := tc.sync(a, map[string]string{a.id: "x", b.id: "y"})
	tc.settle()
	a.synced(t, sync.require(t, "a's sync"))
	// b heartbeats but never syncs: after the rebalance timeout it is
	// removed and the group rebalances.
	for range 9 {
		tc.run(3 * time.Second)
		requireCode(t, "b's heartbeat", tc.heartbeat(b), nil)
		requireCode(t, "a's heartbeat", tc.heartbeat(a), nil)
	}
	tc.run(3 * time.Second)
	tc.requireState("g", statePreparingRebalance)
	tc.requireMembers("g", a.id)
}

func TestFencingErrors(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	members := tc.stableGroup("g", "a", "b")
	a := members[0]
	stranger := &testMember{group: "g", id: "stranger", generation: a.generation}
	stale := &testMember{group: "g", id: a.id, generation: a.generation - 1}
	requireCode(t, "heartbeat of an unknown member", tc.heartbeat(stranger), kerr.UnknownMemberID)
	requireCode(t, "heartbeat of an old generation", tc.heartbeat(stale), kerr.IllegalGeneration)
	requireCode(t, "sync of an old generation", tc.sync(stale, nil).require(t, "sync").ErrorCode, kerr.IllegalGeneration)
	requireCode(t, "sync of an unknown member", tc.sync(stranger, nil).require(t, "sync").ErrorCode, kerr.UnknownMemberID)
	requireCode(t, "heartbeat in an unknown group",
		tc.heartbeat(&testMember{group: "nope", id: "x"}), kerr.UnknownMemberID)
	requireCode(t, "join of an unknown group with a member id",
		tc.join(joinSpec{group: "nope", clientID: "x", memberID: "x-1"}).require(t, "join").ErrorCode, kerr.UnknownMemberID)
	requireCode(t, "join with an empty group id",
		tc.join(joinSpec{group: "", clientID: "x"}).require(t, "join").ErrorCode, kerr.InvalidGroupID)
	requireCode(t, "join with too short a session",
		tc.join(joinSpec{group: "g", clientID: "x", session: time.Second}).require(t, "join").ErrorCode, kerr.InvalidSessionTimeout)
	requireCode(t, "join with too long a session",
		tc.join(joinSpec{group: "g", clientID: "x", session: time.Hour}).require(t, "join").ErrorCode, kerr.InvalidSessionTimeout)
	requireCode(t, "join with a protocol nobody supports",
		tc.join(joinSpec{group: "g", clientID: "x", protocols: []string{"sticky"}}).require(t, "join").ErrorCode, kerr.InconsistentGroupProtocol)
	// The group is still stable: none of that started a rebalance.
	tc.requireState("g", stateStable)

	// A rebalance under way: syncing is refused, committing still works.
	tc.join(joinSpec{group: "g", clientID: "a", memberID: a.id})
	requireCode(t, "sync while preparing", tc.sync(members[1], nil).require(t, "sync").ErrorCode, kerr.RebalanceInProgress)
	requireCode(t, "commit while preparing", tc.commitCode("g", members[1].id, members[1].generation, "orders", 0, 5), nil)
}

func TestGroupMaxSize(t *testing.T) {
	config := testConfig()
	config.MaxSize = 2
	tc := newTestCoordinator(t, config)
	tc.stableGroup("g", "a", "b")
	resp := tc.join(joinSpec{group: "g", clientID: "c"}).require(t, "third join")
	requireCode(t, "third member", resp.ErrorCode, kerr.GroupMaxSizeReached)
	tc.requireState("g", stateStable)
}

func TestNotCoordinatorAndLoading(t *testing.T) {
	config := DefaultConfig()
	config.OffsetsTopicPartitions = 2
	tc := newTestCoordinator(t, config)
	tc.c.Unload(1)
	group := "g0"
	for PartitionFor(group, 2) != 1 {
		group += "x"
	}
	requireCode(t, "join of a group another node leads",
		tc.join(joinSpec{group: group, clientID: "x"}).require(t, "join").ErrorCode, kerr.NotCoordinator)

	// A partition whose log is not yet committed to its end keeps
	// loading until it is.
	tc.log.autoCommit = false
	tc.log.Append(1, []batch.Record{offsetRecord("other", topicPartition{"orders", 0}, &committedOffset{offset: 1})}, func(error) {})
	tc.c.Load(1, 1)
	tc.settle()
	requireCode(t, "join while loading",
		tc.join(joinSpec{group: group, clientID: "x"}).require(t, "join").ErrorCode, kerr.CoordinatorLoadInProgress)
	requireCode(t, "heartbeat while loading", tc.heartbeat(&testMember{group: group, id: "x"}), nil)
	requireCode(t, "sync while loading",
		tc.sync(&testMember{group: group, id: "x"}, nil).require(t, "sync").ErrorCode, kerr.RebalanceInProgress)
	tc.log.commit(1)
	tc.c.HighWatermarkMoved(1)
	tc.settle()
	requireCode(t, "join once loaded",
		tc.join(joinSpec{group: group, clientID: "x"}).require(t, "join").ErrorCode, kerr.MemberIDRequired)
}

func TestUnloadAnswersWaitingRequests(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	_, join := tc.joinNew("g", "a")
	tc.c.Unload(0)
	requireCode(t, "parked join after unload", join.require(t, "join").ErrorCode, kerr.NotCoordinator)
}

func TestProtocolIsTheMostVotedCommonOne(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	join := func(client string, protocols ...string) (*testMember, *answer[*kmsg.JoinGroupResponse]) {
		first := tc.join(joinSpec{group: "g", clientID: client, protocols: protocols}).require(t, "join")
		m := &testMember{group: "g", id: first.MemberID, clientID: client}
		return m, tc.join(joinSpec{group: "g", clientID: client, memberID: m.id, protocols: protocols})
	}
	a, joinA := join("a", "roundrobin", "range")
	_, joinB := join("b", "range", "roundrobin", "sticky")
	_, joinC := join("c", "range", "roundrobin")
	tc.run(2 * tc.config.InitialRebalanceDelay)
	a.joined(t, joinA.require(t, "a"))
	for _, j := range []*answer[*kmsg.JoinGroupResponse]{joinA, joinB, joinC} {
		if p := j.response.Protocol; p == nil || *p != "range" {
			t.Fatalf("protocol %v, want range (two votes of three)", p)
		}
	}
	if !bytes.Equal(a.members[1].ProtocolMetadata, []byte("meta-range-b")) {
		t.Fatalf("leader got b's metadata %q, want its range metadata", a.members[1].ProtocolMetadata)
	}
}

func TestRejoinWithoutChangeDoesNotRebalance(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	members := tc.stableGroup("g", "a", "b")
	b := members[1]
	// A follower rejoining with the same metadata (it missed an answer)
	// is told the current generation.
	resp := tc.join(joinSpec{group: "g", clientID: "b", memberID: b.id}).require(t, "b's rejoin")
	requireCode(t, "b's rejoin", resp.ErrorCode, nil)
	if resp.Generation != 1 || resp.LeaderID != members[0].id || len(resp.Members) != 0 {
		t.Fatalf("rejoin answer %+v", resp)
	}
	tc.requireState("g", stateStable)
	// With a changed subscription it rebalances.
	tc.join(joinSpec{group: "g", clientID: "b", memberID: b.id, protocols: []string{"range", "sticky"}})
	tc.requireState("g", statePreparingRebalance)
}

func TestJoinAgainWhileCompletingGetsTheSameGeneration(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	a, join := tc.joinNew("g", "a")
	tc.run(tc.config.InitialRebalanceDelay)
	a.joined(t, join.require(t, "join"))
	tc.requireState("g", stateCompletingRebalance)
	again := tc.join(joinSpec{group: "g", clientID: "a", memberID: a.id}).require(t, "join again")
	requireCode(t, "join again", again.ErrorCode, nil)
	if again.Generation != a.generation || len(again.Members) != 1 {
		t.Fatalf("join again %+v", again)
	}
	tc.requireState("g", stateCompletingRebalance)
}

func TestAssignmentThatCannotBePersisted(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	a, joinA := tc.joinNew("g", "a")
	b, joinB := tc.joinNew("g", "b")
	tc.run(2 * tc.config.InitialRebalanceDelay)
	a.joined(t, joinA.require(t, "a"))
	b.joined(t, joinB.require(t, "b"))
	tc.log.autoCommit = false
	syncB := tc.sync(b, nil)
	syncA := tc.sync(a, map[string]string{a.id: "x", b.id: "y"})
	// The log times out: the members are told to rejoin.
	tc.run(tc.config.OffsetCommitTimeout)
	requireCode(t, "a's sync", syncA.require(t, "a's sync").ErrorCode, kerr.RebalanceInProgress)
	requireCode(t, "b's sync", syncB.require(t, "b's sync").ErrorCode, kerr.RebalanceInProgress)
	tc.requireState("g", statePreparingRebalance)
	if g := tc.group("g"); g.members[0].assignment != nil {
		t.Fatal("an assignment that was not persisted was kept")
	}
}

func TestLeaveGroupBeforeVersion3(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	members := tc.stableGroup("g", "a")
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version = 2
	req.Group = "g"
	req.MemberID = "stranger"
	requireCode(t, "unknown member leaving", tc.c.LeaveGroup(req).ErrorCode, kerr.UnknownMemberID)
	req.MemberID = members[0].id
	resp := tc.c.LeaveGroup(req)
	requireCode(t, "member leaving", resp.ErrorCode, nil)
	if len(resp.Members) != 0 {
		t.Fatalf("v2 answer lists members: %+v", resp.Members)
	}
	tc.settle()
	tc.requireState("g", stateEmpty)
}

func TestStaticMemberRestartDuringAssignmentRebalances(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	a := &testMember{group: "g", clientID: "a", instanceID: "i-a"}
	b := &testMember{group: "g", clientID: "b", instanceID: "i-b"}
	joinA := tc.join(joinSpec{group: "g", clientID: "a", instanceID: "i-a"})
	joinB := tc.join(joinSpec{group: "g", clientID: "b", instanceID: "i-b"})
	tc.run(2 * tc.config.InitialRebalanceDelay)
	a.joined(t, joinA.require(t, "a"))
	b.joined(t, joinB.require(t, "b"))
	syncB := tc.sync(b, nil)
	// b restarts before the leader assigned: the old b hears it is
	// fenced, and the group starts over so the new id gets an assignment.
	rejoin := tc.join(joinSpec{group: "g", clientID: "b", instanceID: "i-b"})
	requireCode(t, "old b's sync", syncB.require(t, "old b's sync").ErrorCode, kerr.FencedInstanceID)
	tc.requireState("g", statePreparingRebalance)
	rejoin.requirePending(t, "new b's join")
	joinA = tc.join(joinSpec{group: "g", clientID: "a", instanceID: "i-a", memberID: a.id})
	a.joined(t, joinA.require(t, "a's rejoin"))
	resp := rejoin.require(t, "new b's join")
	requireCode(t, "new b's join", resp.ErrorCode, nil)
	if resp.Generation != 2 || resp.MemberID == b.id {
		t.Fatalf("new b: %+v", resp)
	}
}

func TestCloseAnswersWaitingRequests(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	_, join := tc.joinNew("g", "a")
	tc.log.autoCommit = false
	commit := tc.commit("simple", "", -1, "orders", 0, 1)
	tc.c.Close()
	requireCode(t, "parked join", join.require(t, "join").ErrorCode, kerr.NotCoordinator)
	requireCode(t, "waiting commit", commit.require(t, "commit").Topics[0].Partitions[0].ErrorCode, kerr.NotCoordinator)
	requireCode(t, "join after close",
		tc.join(joinSpec{group: "g", clientID: "a"}).require(t, "join").ErrorCode, kerr.CoordinatorNotAvailable)
}
