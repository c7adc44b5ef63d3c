package group

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// staticGroup builds a stable group of static members (instance ids
// "i-<client>"), which join without the MEMBER_ID_REQUIRED round trip.
func (tc *testCoordinator) staticGroup(group string, session time.Duration, clients ...string) []*testMember {
	tc.t.Helper()
	var members []*testMember
	var joins []*answer[*kmsg.JoinGroupResponse]
	for _, client := range clients {
		m := &testMember{group: group, clientID: client, instanceID: "i-" + client}
		members = append(members, m)
		joins = append(joins, tc.join(joinSpec{group: group, clientID: client, instanceID: m.instanceID, session: session}))
	}
	tc.run(2 * tc.config.InitialRebalanceDelay)
	for i, m := range members {
		m.joined(tc.t, joins[i].require(tc.t, "join of "+m.clientID))
	}
	assignments := map[string]string{}
	for _, m := range members {
		assignments[m.id] = "assignment-" + m.clientID
	}
	leaderSync := tc.sync(members[0], assignments)
	tc.settle()
	members[0].synced(tc.t, leaderSync.require(tc.t, "leader sync"))
	for _, m := range members[1:] {
		m.synced(tc.t, tc.sync(m, nil).require(tc.t, "sync of "+m.clientID))
	}
	tc.requireState(group, stateStable)
	return members
}

func TestStaticMemberRestartKeepsItsAssignmentWithoutRebalance(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	members := tc.staticGroup("g", 10*time.Second, "a", "b")
	a, oldB := members[0], members[1]
	if a.id[:4] != "i-a-" {
		t.Fatalf("static member id %q is not prefixed by its instance id", a.id)
	}

	// b's process restarts: it joins with its instance id and no member id.
	join := tc.join(joinSpec{group: "g", clientID: "b", instanceID: "i-b"})
	join.requirePending(t, "join before the new member id is persisted")
	tc.settle()
	resp := join.require(t, "b's rejoin")
	requireCode(t, "b's rejoin", resp.ErrorCode, nil)
	if resp.MemberID == oldB.id || resp.Generation != 1 || resp.LeaderID != a.id || len(resp.Members) != 0 {
		t.Fatalf("rejoin answer %+v (old id %s)", resp, oldB.id)
	}
	tc.requireState("g", stateStable)
	newB := &testMember{group: "g", clientID: "b", instanceID: "i-b"}
	newB.joined(t, resp)
	newB.synced(t, tc.sync(newB, nil).require(t, "sync of the new b"))
	if string(newB.assignment) != "assignment-b" {
		t.Fatalf("the restarted member got %q, want its old assignment", newB.assignment)
	}
	requireCode(t, "a's heartbeat", tc.heartbeat(a), nil)

	// The old process is fenced.
	requireCode(t, "old b's heartbeat", tc.heartbeat(oldB), kerr.FencedInstanceID)
	requireCode(t, "old b's sync", tc.sync(oldB, nil).require(t, "sync").ErrorCode, kerr.FencedInstanceID)
	commit := tc.commit("g", oldB.id, oldB.generation, "orders", 0, 1)
	requireCode(t, "old b's commit", commit.require(t, "commit").Topics[0].Partitions[0].ErrorCode, kerr.UnknownMemberID)

	// The new member id is what the log says now.
	records := tc.log.records(t, 0)
	last := records[len(records)-1].metadata
	ids := []string{last.Members[0].MemberID, last.Members[1].MemberID}
	if !slices.Equal(ids, []string{a.id, newB.id}) || string(last.Members[1].Assignment) != "assignment-b" {
		t.Fatalf("persisted members %v, assignment %q", ids, last.Members[1].Assignment)
	}
}

func TestStaticMemberFencingByInstanceID(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	members := tc.staticGroup("g", 10*time.Second, "a")
	impostor := &testMember{group: "g", id: "someone-else", generation: 1, instanceID: "i-a"}
	requireCode(t, "heartbeat with another member's instance id", tc.heartbeat(impostor), kerr.FencedInstanceID)
	requireCode(t, "join with another member's instance id",
		tc.join(joinSpec{group: "g", clientID: "x", memberID: "someone-else", instanceID: "i-a"}).require(t, "join").ErrorCode,
		kerr.FencedInstanceID)
	unknown := &testMember{group: "g", id: members[0].id, generation: 1, instanceID: "i-unknown"}
	requireCode(t, "heartbeat with an unknown instance id", tc.heartbeat(unknown), kerr.UnknownMemberID)
}

func TestStaticMemberLeavingRebalances(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	members := tc.staticGroup("g", 10*time.Second, "a", "b")
	resp := tc.leave("g", members[1])
	requireCode(t, "leave", resp.Members[0].ErrorCode, nil)
	tc.requireState("g", statePreparingRebalance)
	tc.requireMembers("g", members[0].id)

	// An administrator removes a by instance id alone.
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Version = 5
	req.Group = "g"
	identity := kmsg.NewLeaveGroupRequestMember()
	instance := "i-a"
	identity.InstanceID = &instance
	req.Members = append(req.Members, identity)
	requireCode(t, "removal by instance id", tc.c.LeaveGroup(req).Members[0].ErrorCode, nil)
	tc.requireMembers("g")
}

func TestStaticMemberStaysThroughRebalanceUntilSessionTimeout(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	// Sessions of 60 s outlast the 30 s rebalance timeout.
	members := tc.staticGroup("g", time.Minute, "a", "b")
	a, b := members[0], members[1]
	join := tc.join(joinSpec{group: "g", clientID: "a", instanceID: "i-a", memberID: a.id, session: time.Minute})
	tc.run(30 * time.Second)
	a.joined(t, join.require(t, "a's rejoin"))
	// b did not rejoin but is static: still a member of generation 2.
	if a.generation != 2 || !slices.Equal(memberIDs(a.members), []string{a.id, b.id}) {
		t.Fatalf("generation %d, members %v", a.generation, memberIDs(a.members))
	}
}

// A static leader that restarts rejoins a stable group without a
// rebalance. Before v9 it is told the old leader id, so it takes itself
// for a follower; from v9 (KIP-814) it is told it leads, with every
// member, and to skip the assignment: its SyncGroup hands out nothing new,
// and each member keeps what it had.
func TestStaticLeaderRestartSkipsTheAssignmentFromV9(t *testing.T) {
	for _, version := range []int16{7, 9} {
		tc := newTestCoordinator(t, testConfig())
		members := tc.staticGroup("g", 10*time.Second, "a", "b")
		oldA, b := members[0], members[1]

		join := tc.join(joinSpec{group: "g", clientID: "a", instanceID: "i-a", version: version})
		tc.settle()
		resp := join.require(t, "a's rejoin")
		requireCode(t, "a's rejoin", resp.ErrorCode, nil)
		if resp.MemberID == oldA.id || resp.Generation != 1 {
			t.Fatalf("v%d: rejoin answer %+v (old id %s), want a new id in generation 1", version, resp, oldA.id)
		}
		switch {
		case version < 9 && (resp.LeaderID != oldA.id || len(resp.Members) != 0 || resp.SkipAssignment):
			t.Fatalf("v%d: rejoin answer %+v, want the old leader id %s and no members", version, resp, oldA.id)
		case version >= 9 && (resp.LeaderID != resp.MemberID || len(resp.Members) != 2 || !resp.SkipAssignment):
			t.Fatalf("v%d: rejoin answer %+v, want to lead with both members and SkipAssignment", version, resp)
		}
		tc.requireState("g", stateStable)

		newA := &testMember{group: "g", clientID: "a", instanceID: "i-a"}
		newA.joined(t, resp)
		newA.synced(t, tc.sync(newA, map[string]string{newA.id: "ignored", b.id: "ignored"}).require(t, "sync of the new a"))
		if string(newA.assignment) != "assignment-a" {
			t.Fatalf("v%d: the restarted leader got %q, want its old assignment", version, newA.assignment)
		}
		b.synced(t, tc.sync(b, nil).require(t, "b's sync"))
		if string(b.assignment) != "assignment-b" || b.generation != 1 {
			t.Fatalf("v%d: b has %q in generation %d, want its old assignment in generation 1", version, b.assignment, b.generation)
		}
	}
}
