package replica

import (
	"slices"
	"testing"
	"time"
)

// takeoverHarness has node 1 lead and commit "a", then moves the
// leadership to node 2 while node 1, cut off, cannot fetch: node 2 must
// wait for it (until formerUntil from now) before exposing "b".
func takeoverHarness(t *testing.T, formerUntil time.Duration) (*harness, *ackOutcome) {
	t.Helper()
	h := newHarness(t, 3, nil)
	h.setLeader(1, []int32{1, 2, 3})
	_, a := h.produce("a")
	h.runUntil("a acknowledged", func() bool { return a.answered })
	h.runUntil("followers learn a is committed", func() bool {
		return h.partition(2).HighWatermark() == 1 && h.partition(3).HighWatermark() == 1
	})
	h.nodes[1].cut = true
	h.formers = []FormerLeader{{ID: 1, Until: time.Duration(h.kernel.Now()) + formerUntil}}
	h.setLeader(2, []int32{2, 3})
	h.formers = nil
	offset, b := h.produce("b")
	if offset != 1 {
		t.Fatalf("b appended at %d, want 1", offset)
	}
	return h, b
}

// requireHeld checks that the new leader has everything it needs to
// expose b but the takeover, and keeps it hidden.
func requireHeld(t *testing.T, h *harness, b *ackOutcome) {
	t.Helper()
	h.runUntil("node 3 holds b", func() bool { return h.partition(3).SyncedOffset() == 2 })
	h.run(100 * time.Millisecond)
	if b.answered {
		t.Fatalf("b acknowledged (err %v) while the former leader may still serve", b.err)
	}
	if hw := h.partition(2).HighWatermark(); hw != 1 {
		t.Fatalf("new leader's high watermark %d during the takeover, want 1", hw)
	}
}

func requireExposed(t *testing.T, h *harness, b *ackOutcome) {
	t.Helper()
	h.runUntil("b acknowledged", func() bool { return b.answered })
	if b.err != nil {
		t.Fatalf("b: %v", b.err)
	}
	if hw := h.partition(2).HighWatermark(); hw != 2 {
		t.Fatalf("new leader's high watermark %d after the takeover, want 2", hw)
	}
	if got, want := h.values(2), []string{"0:a@1", "1:b@2"}; !slices.Equal(got, want) {
		t.Fatalf("new leader's log %v, want %v", got, want)
	}
}

func TestTakeoverEndsWhenTheFormerLeaderFetchesAtTheNewEpoch(t *testing.T) {
	h, b := takeoverHarness(t, time.Hour)
	requireHeld(t, h, b)
	h.nodes[1].cut = false
	requireExposed(t, h, b)
	h.requireSameLogs(1, 2, 3)
}

func TestTakeoverEndsWhenTheFormerLeadersBrokerIsFenced(t *testing.T) {
	h, b := takeoverHarness(t, time.Hour)
	requireHeld(t, h, b)
	h.nodes[1].fenced = true
	h.partition(2).FormerLeadersMayHaveGone()
	if hw := h.partition(2).HighWatermark(); hw != 2 {
		t.Fatalf("high watermark %d once the former leader is fenced, want 2 at once", hw)
	}
	requireExposed(t, h, b)
}

func TestTakeoverEndsWhenTheFormerLeadersLeaseHasSurelyRunOut(t *testing.T) {
	h, b := takeoverHarness(t, 3*time.Second)
	requireHeld(t, h, b)
	h.run(2 * time.Second)
	if b.answered {
		t.Fatal("b acknowledged before the former leader's Until")
	}
	h.run(time.Second)
	requireExposed(t, h, b)
}

// DeleteRecords promises nothing during a takeover either: the former
// leader would still serve what the answer says is gone.
func TestTakeoverHoldsDeleteRecords(t *testing.T) {
	h, b := takeoverHarness(t, time.Hour)
	requireHeld(t, h, b)
	var low int64 = -2
	var deleteErr error
	h.partition(2).DeleteRecords(1, 30*time.Second, func(lowWatermark int64, err error) { low, deleteErr = lowWatermark, err })
	h.run(time.Second)
	if low != -2 {
		t.Fatalf("DeleteRecords answered (%d, %v) during the takeover", low, deleteErr)
	}
	h.nodes[1].cut = false
	h.runUntil("DeleteRecords answered", func() bool { return low != -2 })
	if deleteErr != nil || low != 1 {
		t.Fatalf("DeleteRecords answered (%d, %v), want (1, nil)", low, deleteErr)
	}
}

// A leadership that does not follow a deposition (the first, or one no
// former leader can still serve in) exposes at once.
func TestLeadershipWithoutFormerLeadersDoesNotWait(t *testing.T) {
	h, b := takeoverHarness(t, 0)
	h.runUntil("b acknowledged", func() bool { return b.answered })
	if b.err != nil {
		t.Fatalf("b: %v", b.err)
	}
	if h.partition(2).takingOver() {
		t.Fatal("a takeover with no former leader left")
	}
}

// A former leader that is no longer a replica (a reassignment moved the
// leader off it) never fetches; the controller finding it caught up ends
// its part in the takeover.
func TestTakeoverEndsWhenTheFormerLeaderIsFoundCaughtUp(t *testing.T) {
	h, b := takeoverHarness(t, time.Hour)
	requireHeld(t, h, b)
	h.partition(2).FormerLeaderCaughtUp(3) // not a former leader: nothing moves
	if hw := h.partition(2).HighWatermark(); hw != 1 {
		t.Fatalf("high watermark %d after another broker caught up, want 1", hw)
	}
	h.partition(2).FormerLeaderCaughtUp(1)
	if hw := h.partition(2).HighWatermark(); hw != 2 {
		t.Fatalf("high watermark %d once the former leader caught up, want 2 at once", hw)
	}
	requireExposed(t, h, b)
}
