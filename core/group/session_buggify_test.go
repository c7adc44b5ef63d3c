package group

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/core"
	"sluice/sim"
	"sluice/sim/kernel"
)

// TestShortSessionExpiresMembersEarly switches on the BUGGIFY site
// group-session-short: a member that stays silent for longer than a
// third of its session, but far less than the whole of it, is removed
// and the group rebalances, as if its heartbeats had been delayed in the
// network. What must still hold: a member that heartbeats often enough
// stays, the removed one is told UNKNOWN_MEMBER_ID and can join again,
// and the group's committed offsets are untouched.
func TestShortSessionExpiresMembersEarly(t *testing.T) {
	tc := newBuggifiedCoordinator(t, testConfig())
	const session = 10 * time.Second // joinSpec's default
	members := tc.stableGroup("g", "a", "b")
	a, b := members[0], members[1]
	generation := a.generation
	requireCode(t, "commit", tc.commitCode("g", a.id, a.generation, "orders", 0, 42), nil)
	requireCode(t, "a's heartbeat", tc.heartbeat(a), nil)
	requireCode(t, "b's heartbeat", tc.heartbeat(b), nil)

	// a heartbeats within each third of its session, b stops; after
	// 4 s (well within the 10 s session) b is gone.
	step := session / sessionBuggifyDivisor / 2
	for elapsed := time.Duration(0); elapsed < 4*time.Second; elapsed += step {
		tc.run(step)
		if tc.group("g").byID[a.id] != nil {
			tc.heartbeat(a)
		}
	}
	tc.requireMembers("g", a.id)
	tc.requireState("g", statePreparingRebalance)
	requireCode(t, "b's heartbeat after expiry", tc.heartbeat(b), kerr.UnknownMemberID)
	requireCode(t, "a's heartbeat during the rebalance", tc.heartbeat(a), kerr.RebalanceInProgress)
	if got := tc.fetch("g", "orders", 0); got != 42 {
		t.Fatalf("committed offset after the expiry is %d, want 42", got)
	}

	// b comes back as a new member: the group takes it.
	b2, join := tc.joinNew("g", "b")
	rejoin := tc.join(joinSpec{group: "g", clientID: "a", memberID: a.id})
	tc.settle()
	b2.joined(t, join.require(t, "b's new join"))
	a.joined(t, rejoin.require(t, "a's rejoin"))
	if a.generation != b2.generation || a.generation <= generation {
		t.Fatalf("generations after the rebalance: a %d, b %d, want one above %d", a.generation, b2.generation, generation)
	}
}

// newBuggifiedCoordinator is newTestCoordinator with every BUGGIFY site
// on, firing each time it is reached.
func newBuggifiedCoordinator(t tester, config Config) *testCoordinator {
	t.Helper()
	k := kernel.NewKernel(1, nil)
	tc := &testCoordinator{t: t, kernel: k, config: config, topics: map[string]int32{"orders": 3, "payments": 2}}
	buggify := core.NewBuggify(kernel.NewRand(1, "buggify"), 1, 1)
	tc.machine = sim.NewMachine(k, nil, "n1", sim.MachineOptions{Buggify: buggify})
	tc.log = newFakeLog(tc.machine.Clock)
	tc.start()
	return tc
}
