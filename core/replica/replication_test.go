package replica

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

func TestFollowersReplicateTheLeadersAppends(t *testing.T) {
	h := newHarness(t, 3, nil)
	h.setLeader(1, []int32{1, 2, 3})
	first, a := h.produce("a", "b")
	second, b := h.produce("c")
	h.runUntil("both produces acknowledged", func() bool { return a.answered && b.answered })
	if a.err != nil || b.err != nil {
		t.Fatalf("acks: %v, %v", a.err, b.err)
	}
	if first != 0 || second != 2 {
		t.Fatalf("offsets %d and %d, want 0 and 2", first, second)
	}
	want := []string{"0:a@1", "1:b@1", "2:c@1"}
	if got := h.values(1); !slices.Equal(got, want) {
		t.Fatalf("leader's log %v, want %v", got, want)
	}
	h.runUntil("followers learn the high watermark", func() bool {
		return h.partition(2).HighWatermark() == 3 && h.partition(3).HighWatermark() == 3
	})
	h.requireSameLogs(1, 2, 3)
	if hw := h.partition(1).HighWatermark(); hw != 3 {
		t.Fatalf("leader's high watermark %d, want 3", hw)
	}
	if len(h.proposals) != 0 {
		t.Fatalf("an ISR that keeps up changed: %+v", h.proposals)
	}
}

func TestAcksAllWaitForEveryInSyncReplicaToSync(t *testing.T) {
	h := newHarness(t, 3, nil)
	h.setLeader(1, []int32{1, 2, 3})
	var outcomes []*ackOutcome
	var lasts []int64
	for i := range 20 {
		offset, outcome := h.produce("v" + string(rune('a'+i)))
		outcomes = append(outcomes, outcome)
		lasts = append(lasts, offset)
		h.run(time.Duration(i%4) * time.Millisecond)
	}
	h.runUntil("every produce acknowledged", func() bool {
		for _, o := range outcomes {
			if !o.answered {
				return false
			}
		}
		return true
	})
	for i, o := range outcomes {
		if o.err != nil {
			t.Fatalf("produce %d: %v", i, o.err)
		}
		for _, id := range h.ids {
			if o.syncedAtAnswer[id] <= lasts[i] {
				t.Fatalf("produce %d (offset %d) acknowledged while node %d had synced only below %d", i, lasts[i], id, o.syncedAtAnswer[id])
			}
		}
	}
}

func TestHighWatermarkIsTheSmallestSyncedEndInTheISR(t *testing.T) {
	h := newHarness(t, 3, nil)
	h.setLeader(1, []int32{1, 2, 3})
	h.produce("a")
	h.runUntil("committed", func() bool { return h.partition(1).HighWatermark() == 1 })

	// Node 3 stops fetching: it stays in the ISR (until the lag time),
	// so nothing more commits, however far node 2 gets.
	h.nodes[3].cut = true
	_, waiting := h.produce("b", "c")
	h.runUntil("node 2 has synced everything", func() bool { return h.partition(2).SyncedOffset() == 3 })
	h.run(100 * time.Millisecond)
	if hw := h.partition(1).HighWatermark(); hw != 1 || waiting.answered {
		t.Fatalf("high watermark %d (answered %v) moved past the ISR member that has only 1", hw, waiting.answered)
	}
	// Node 3 back: everything commits.
	h.nodes[3].cut = false
	h.runUntil("committed", func() bool { return waiting.answered })
	if hw := h.partition(1).HighWatermark(); hw != 3 || waiting.err != nil {
		t.Fatalf("high watermark %d, ack %v", hw, waiting.err)
	}
}

func TestNothingCommitsWhileTheISRIsBelowMinInsyncReplicas(t *testing.T) {
	h := newHarness(t, 3, map[string]string{"min.insync.replicas": "2"})
	h.manualISR = true
	h.setLeader(1, []int32{1})
	leader := h.partition(1)
	if _, err := leader.AppendAsLeader(h.batch(-1, 0, 0, "refused"), true); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("acks=all with an ISR of 1 and min.insync.replicas 2: %v, want NOT_ENOUGH_REPLICAS", err)
	}
	if _, err := leader.AppendAsLeader(h.batch(-1, 0, 0, "acks=1"), false); err != nil {
		t.Fatal(err)
	}
	h.run(100 * time.Millisecond)
	if hw := leader.HighWatermark(); hw != 0 {
		t.Fatalf("high watermark %d with an ISR below min.insync.replicas", hw)
	}
	// The followers caught up and asked to join; once the ISR has two,
	// the record commits.
	if len(h.proposals) == 0 {
		t.Fatal("no follower asked to join the ISR")
	}
	h.commitProposal(1, h.proposals[len(h.proposals)-1])
	h.runUntil("committed", func() bool { return leader.HighWatermark() == 1 })
}

func TestAcksFailWhenTheISRShrinksBelowMinInsyncReplicas(t *testing.T) {
	h := newHarness(t, 3, map[string]string{"min.insync.replicas": "2"})
	h.setLeader(1, []int32{1, 2, 3})
	h.nodes[2].cut, h.nodes[3].cut = true, true
	_, waiting := h.produce("a")
	h.run(50 * time.Millisecond)
	if waiting.answered {
		t.Fatal("acknowledged without followers")
	}
	h.setISR([]int32{1, 2})
	if waiting.answered {
		t.Fatal("answered with an ISR still at min.insync.replicas")
	}
	h.setISR([]int32{1})
	if !waiting.answered || !errors.Is(waiting.err, kerr.NotEnoughReplicasAfterAppend) {
		t.Fatalf("answered %v with %v, want NOT_ENOUGH_REPLICAS_AFTER_APPEND", waiting.answered, waiting.err)
	}
	// The record stays in the log: it commits if the ISR grows back.
	h.nodes[2].cut, h.nodes[3].cut = false, false
	h.runUntil("committed after all", func() bool { return h.partition(1).HighWatermark() == 1 })
}

func TestLeaderStepsDownFailingWaitingAcks(t *testing.T) {
	h := newHarness(t, 3, nil)
	h.setLeader(1, []int32{1, 2, 3})
	h.nodes[2].cut, h.nodes[3].cut = true, true
	_, waiting := h.produce("a")
	h.run(10 * time.Millisecond)
	h.setLeader(2, []int32{1, 2, 3})
	if !waiting.answered || !errors.Is(waiting.err, kerr.NotLeaderForPartition) {
		t.Fatalf("answered %v with %v, want NOT_LEADER_OR_FOLLOWER", waiting.answered, waiting.err)
	}
	if h.partition(1).IsLeader() || !h.partition(1).IsFollower() || h.partition(1).Leader() != 2 {
		t.Fatal("the old leader does not follow the new one")
	}
}

func TestPageCacheModeAcknowledgesBeforeTheSync(t *testing.T) {
	h := newHarness(t, 3, map[string]string{"flush.messages": "1000"})
	h.setLeader(1, []int32{1, 2, 3})
	_, outcome := h.produce("a")
	h.runUntil("acknowledged", func() bool { return outcome.answered })
	if outcome.err != nil {
		t.Fatal(outcome.err)
	}
	for _, id := range h.ids {
		if synced := outcome.syncedAtAnswer[id]; synced != 0 {
			t.Fatalf("node %d had synced to %d: the test does not show page-cache acks", id, synced)
		}
	}
	h.requireSameLogs(1, 2, 3)
}

// TestLeaderRefusesABatchNoSegmentCouldHold: a produced batch larger than
// segment.bytes (here below max.message.bytes) is refused with
// RECORD_LIST_TOO_LARGE, as Kafka's UnifiedLog.append refuses it, and
// nothing is appended; a batch that fits is taken, and so is the broker's
// own oversized batch (a group coordinator's), alone in a segment.
func TestLeaderRefusesABatchNoSegmentCouldHold(t *testing.T) {
	h := newHarness(t, 1, map[string]string{"segment.bytes": "256"})
	h.setLeader(1, []int32{1})
	big := h.batch(-1, 0, 0, strings.Repeat("x", 300))
	if _, err := h.partition(1).AppendAsLeader(big, false); !errors.Is(err, kerr.RecordListTooLarge) {
		t.Fatalf("a %d-byte batch with segment.bytes 256: %v, want RECORD_LIST_TOO_LARGE", len(big), err)
	}
	if end := h.end(1); end != 0 {
		t.Fatalf("log end %d after the refusal, want 0", end)
	}
	small := h.batch(-1, 0, 0, "fits")
	if _, err := h.partition(1).AppendAsLeader(small, false); err != nil {
		t.Fatalf("a %d-byte batch with segment.bytes 256: %v", len(small), err)
	}
	if _, err := h.partition(1).AppendOwnAsLeader(big, false); err != nil {
		t.Fatalf("the broker's own %d-byte batch with segment.bytes 256: %v", len(big), err)
	}
	if got, want := h.values(1), []string{"0:fits@1", "1:" + strings.Repeat("x", 300) + "@1"}; !slices.Equal(got, want) {
		t.Fatalf("log %v, want %v", got, want)
	}
}
