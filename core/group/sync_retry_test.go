package group

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A leader whose SyncGroup answer was lost sends it again, perhaps with
// another assignment (its metadata caught up between). While the first is
// being written the coordinator must not write the second: the members are
// handed the first, and a coordinator that loads the group again must find
// the same one, not whichever record came last (regression
// cluster-group-liveness-229681: after a failover the coordinator believed
// an assignment no member held, and partitions went to nobody).
func TestARetriedLeaderSyncDoesNotWriteASecondAssignment(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	leader, leaderJoin := tc.joinNew("g", "a")
	follower, followerJoin := tc.joinNew("g", "b")
	tc.run(2 * tc.config.InitialRebalanceDelay)
	leader.joined(t, leaderJoin.require(t, "leader join"))
	follower.joined(t, followerJoin.require(t, "follower join"))

	tc.log.autoCommit = false // the first assignment's write is slow
	first := map[string]string{leader.id: "first-a", follower.id: "first-b"}
	second := map[string]string{leader.id: "second-a", follower.id: "second-b"}
	firstSync := tc.sync(leader, first)
	followerSync := tc.sync(follower, nil)
	tc.settle()
	retriedSync := tc.sync(leader, second)
	tc.settle()
	requireCode(t, "the leader's abandoned first sync", firstSync.require(t, "first leader sync").ErrorCode, kerr.RebalanceInProgress)
	retriedSync.requirePending(t, "retried leader sync")

	partition := tc.c.PartitionFor("g")
	tc.log.commit(partition)
	tc.settle()
	tc.log.autoCommit = true
	leader.synced(t, retriedSync.require(t, "retried leader sync"))
	follower.synced(t, followerSync.require(t, "follower sync"))
	if string(leader.assignment) != "first-a" || string(follower.assignment) != "first-b" {
		t.Fatalf("members were handed %q and %q, want the first assignment", leader.assignment, follower.assignment)
	}
	tc.requireState("g", stateStable)

	tc.restart()
	described := tc.describe("g")
	requireCode(t, "describe after reload", described.ErrorCode, nil)
	got := map[string]string{}
	for _, m := range described.Members {
		got[m.MemberID] = string(m.MemberAssignment)
	}
	if got[leader.id] != "first-a" || got[follower.id] != "first-b" || len(got) != 2 {
		t.Fatalf("after a reload the coordinator holds %v, want the assignment its members were handed (%v)", got, first)
	}
}
