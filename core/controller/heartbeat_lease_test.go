package controller

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// An unfenced heartbeat answer renews the broker's read lease, so it must
// come from a controller that still leads. Within its leadership lease
// (a proposal of its committed recently) the controller answers at once;
// past it, only after a no-op commits, and a controller deposed without
// knowing it, whose no-op cannot commit, renews nothing (cluster seed
// 4457724: a paused controller node, resumed, answered its own broker
// at once, and that broker served stale committed offsets).
func TestAHeartbeatPastTheLeadershipLeaseWaitsForACommit(t *testing.T) {
	tc := newTestController(t, Config{LeadershipLease: time.Second}, 1)
	if hb := tc.heartbeat(1, heartbeatOptions{}); hb.ErrorCode != 0 || hb.IsFenced || len(tc.proposer.proposals) != 0 {
		t.Fatalf("within the lease: %+v after %d proposals; want an unfenced answer at once", hb, len(tc.proposer.proposals))
	}

	tc.elapse(2 * time.Second)
	if hb := tc.heartbeat(1, heartbeatOptions{}); hb.ErrorCode != 0 || hb.IsFenced {
		t.Fatalf("past the lease: %+v; want unfenced once the no-op commits", hb)
	}
	if len(tc.proposer.proposals) != 1 || tc.proposer.changes() != 0 {
		t.Fatalf("past the lease the heartbeat proposed %v; want one no-op", tc.proposer.proposals)
	}
	if tc.heartbeat(1, heartbeatOptions{}); len(tc.proposer.proposals) != 1 {
		t.Fatalf("the no-op renewed the lease, yet the next heartbeat proposed again")
	}

	tc.elapse(2 * time.Second)
	tc.proposer.failure = kerr.NotController // deposed: nothing it proposes commits
	if hb := tc.heartbeat(1, heartbeatOptions{}); hb.ErrorCode == 0 {
		t.Fatalf("a deposed controller past its lease answered %+v; want a refusal", hb)
	}
}
