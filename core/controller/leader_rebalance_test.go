package controller

import (
	"testing"
	"time"
)

// Leadership that a failure moved away goes back to the preferred replica
// at the next imbalance check once that replica is in the ISR again, and
// not before; with the check off (an interval of zero) it stays.
func TestLeadersGoBackToTheirPreferredReplicas(t *testing.T) {
	for _, every := range []time.Duration{0, 10 * time.Second} {
		tc := newTestController(t, Config{LeaderImbalanceCheckInterval: every, SessionTimeout: 3 * time.Second}, 1, 2)
		tc.mustCreate("t", 1, 2)
		p := tc.c.Image().Topics["t"].Partitions[0]
		preferred, other := p.Replicas[0], p.Replicas[1]
		tc.expire(preferred)
		tc.heartbeat(preferred, heartbeatOptions{})
		if p.Leader != other {
			t.Fatalf("every %v: leader %d after the preferred replica's session expired, want %d", every, p.Leader, other)
		}
		// Out of the ISR: an imbalance check finds nothing it may do.
		for range 12 {
			tc.heartbeatAllBut(0)
			tc.elapse(time.Second)
		}
		if p.Leader != other {
			t.Fatalf("every %v: leader %d moved to a replica outside the ISR", every, p.Leader)
		}
		alter := tc.alterPartition(3, other, alterISR("t", p, other, preferred))
		requireErrorCode(t, "expand", alter.Topics[0].Partitions[0].ErrorCode, nil)
		epoch := p.LeaderEpoch
		for range 12 {
			tc.heartbeatAllBut(0)
			tc.elapse(time.Second)
		}
		requireLeadershipInvariants(t, tc.c.Image())
		switch {
		case every == 0 && p.Leader != other:
			t.Fatalf("rebalancing off: leader %d, want %d kept", p.Leader, other)
		case every > 0 && (p.Leader != preferred || p.LeaderEpoch != epoch+1 || p.UncleanEpoch != 0):
			t.Fatalf("rebalancing every %v: leader %d epoch %d unclean epoch %d, want %d at %d, clean", every, p.Leader, p.LeaderEpoch, p.UncleanEpoch, preferred, epoch+1)
		}
	}
}
