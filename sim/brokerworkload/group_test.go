package brokerworkload

import (
	"testing"
	"time"

	"sluice/jepsen/history"
	"sluice/sim"
)

// TestGroupRebalancesUnderFaultsAndDrains turns the group's faults up
// (consumers leave and stall past their sessions, the broker crashes
// while the group rebalances) and the broker's other faults off, and
// requires the runs to pass: the group settles and drains, and every
// check holds. It also requires the faults to have done their work:
// leaves, stalls, commits acknowledged, and several generations.
func TestGroupRebalancesUnderFaultsAndDrains(t *testing.T) {
	adjust := func(s *settings) {
		s.brokerCrashMean, s.resetMean, s.disk.SyncFailure = 0, 0, 0
		s.group.leaveMean = 3 * time.Second
		s.group.stallMean = 4 * time.Second
		s.group.crashInRebalance = 0.5
	}
	for seed := uint64(1); seed <= 3; seed++ {
		result, r := runSeed(seed, sim.RunOptions{}, adjust)
		if !result.Passed() {
			t.Fatalf("seed %d with the test's settings: %s", seed, result.Line())
		}
		for _, name := range []string{"consumer_leaves", "consumer_stalls", "commits_ok"} {
			if stat(t, result, name) == 0 {
				t.Errorf("seed %d: %s is 0; the test no longer exercises it:\n%s", seed, name, result.Line())
			}
		}
		generations := map[int32]bool{}
		for _, op := range r.recorder.History() {
			if op.F == history.FuncSubscribe && op.Type == history.OK {
				if op.Group != groupName || op.MemberID == "" {
					t.Fatalf("seed %d: subscribe %+v, want group %s and a member", seed, op, groupName)
				}
				generations[op.Generation] = true
			}
		}
		if len(generations) < 3 {
			t.Errorf("seed %d: the group went through %d generations, want at least 3 with consumers leaving and stalling", seed, len(generations))
		}
	}
}

// TestGroupSettlesOnEveryPartitionOnce checks the liveness phase's end
// state directly: after a passing run, the consumers share one
// generation whose assignments cover every partition once, each owner
// committed its partition's end, and a static consumer is named in the
// history by its group.instance.id.
func TestGroupSettlesOnEveryPartitionOnce(t *testing.T) {
	adjust := func(s *settings) { s.group.consumers[0].static = true }
	result, r := runSeed(4, sim.RunOptions{}, adjust)
	if !result.Passed() {
		t.Fatal(result.Line())
	}
	generation, owners, problem := r.groupSettled()
	if problem != "" {
		t.Fatalf("the group is not settled after a passing run: %s", problem)
	}
	if len(owners) != r.settings.partitions {
		t.Fatalf("%d partitions owned of %d", len(owners), r.settings.partitions)
	}
	for tp, owner := range owners {
		if owner.Consumer.Membership().Generation != generation || owner.Consumer.Committed(tp) != r.drainer.Position(tp) {
			t.Fatalf("%s: owner %s in generation %d committed %d, want generation %d and the end %d",
				tp, owner.Name, owner.Consumer.Membership().Generation, owner.Consumer.Committed(tp), generation, r.drainer.Position(tp))
		}
	}
	named := false
	for _, op := range r.recorder.History() {
		if op.F == history.FuncSubscribe && op.Type == history.OK && op.MemberID == "c1-instance" {
			named = true
		}
	}
	if !named {
		t.Fatal("the static consumer c1 is never named by its instance id in the history")
	}
}
