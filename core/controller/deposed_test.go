package controller

import (
	"slices"
	"testing"
)

// deposedByReassignment moves a one-replica partition off its leader by a
// reassignment and returns the partition, the deposed broker, and the
// metadata offset it had applied before (its image lags there).
func deposedByReassignment(t *testing.T, tc *testController) (old int32, lagging int64, deposedFrom func() []int32) {
	t.Helper()
	p := tc.mustCreate("t", 1, 1).Partitions[0]
	old = p.Leader
	other := int32(1)
	if other == old {
		other = 2
	}
	requireCode(t, "reassign", tc.reassign("t", 0, []int32{other}).ErrorCode, nil, nil)
	lagging = tc.c.Image().Offset
	tc.alterPartition(3, old, alterISR("t", p, old, other))
	if p.Leader != other || slices.Contains(p.Replicas, old) || !slices.Contains(p.Deposed, old) {
		t.Fatalf("not completed: leader %d replicas %v deposed %v", p.Leader, p.Replicas, p.Deposed)
	}
	return old, lagging, func() []int32 { return tc.c.Image().Topics["t"].Partitions[0].Deposed }
}

// A controlled shutdown fences the broker (which ends its standing as a
// former leader) only once it has applied what deposed it, even where
// the shutdown itself moved nothing: until then it may serve on its lease.
func TestControlledShutdownWaitsForADeposedLeaderToCatchUp(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2, 3)
	old, lagging, deposed := deposedByReassignment(t, tc)
	hb := tc.heartbeat(old, heartbeatOptions{wantShutdown: true, offset: at(lagging)})
	if hb.ShouldShutdown || tc.c.Image().Brokers[old].Fenced || !slices.Contains(deposed(), old) {
		t.Fatalf("broker %d told to shut down %v, fenced %v, deposed from %v, before it applied its deposition",
			old, hb.ShouldShutdown, tc.c.Image().Brokers[old].Fenced, deposed())
	}
	hb = tc.heartbeat(old, heartbeatOptions{wantShutdown: true, offset: at(tc.c.Image().Offset)})
	if !hb.ShouldShutdown || !tc.c.Image().Brokers[old].Fenced || len(deposed()) != 0 {
		t.Fatalf("caught up: told to shut down %v, fenced %v, deposed from %v", hb.ShouldShutdown, tc.c.Image().Brokers[old].Fenced, deposed())
	}
}

// An unfenced deposed broker that catches up is deposed no more, by a
// record its heartbeat brings; a lagging one stays deposed.
func TestACaughtUpDeposedLeaderIsDeposedNoMore(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2, 3)
	old, lagging, deposed := deposedByReassignment(t, tc)
	if hb := tc.heartbeat(old, heartbeatOptions{offset: at(lagging)}); hb.IsCaughtUp || !slices.Contains(deposed(), old) {
		t.Fatalf("lagging: caught up %v, deposed from %v", hb.IsCaughtUp, deposed())
	}
	before := tc.c.Image().Offset
	if hb := tc.heartbeat(old, heartbeatOptions{offset: at(before)}); !hb.IsCaughtUp || hb.IsFenced {
		t.Fatalf("caught up: answered caught up %v, fenced %v", hb.IsCaughtUp, hb.IsFenced)
	}
	if len(deposed()) != 0 || tc.c.Image().Offset != before+1 {
		t.Fatalf("after the caught-up heartbeat: deposed from %v, offset %d (want one record after %d)", deposed(), tc.c.Image().Offset, before)
	}
	tc.heartbeat(old, heartbeatOptions{offset: at(tc.c.Image().Offset)})
	if tc.c.Image().Offset != before+1 {
		t.Fatal("a broker deposed from nothing got another caught-up record")
	}
}
