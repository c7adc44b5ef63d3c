package replica

import (
	"testing"
	"time"
)

// Each planted bug must break, in a small scenario, the property the
// simulator is meant to catch it by; otherwise the simulator's measure of
// it means nothing. (CanaryTruncateToHighWatermark is shown in
// TestRestartedFollowerKeepsCommittedRecords.)

func TestCanaryHighWatermarkWithoutISRCommitsWhatOnlyTheLeaderHas(t *testing.T) {
	h := newHarness(t, 3, nil, CanaryHighWatermarkWithoutISR)
	h.setLeader(1, []int32{1, 2, 3})
	h.nodes[2].cut, h.nodes[3].cut = true, true
	_, outcome := h.produce("alone")
	h.runUntil("acknowledged", func() bool { return outcome.answered })
	if outcome.err != nil || h.end(2) != 0 || h.end(3) != 0 {
		t.Fatalf("ack %v with followers at %d and %d", outcome.err, h.end(2), h.end(3))
	}
}

func TestCanaryReadAboveHighWatermarkExposesUncommittedRecords(t *testing.T) {
	h := newHarness(t, 2, nil, CanaryReadAboveHighWatermark)
	h.setLeader(1, []int32{1, 2})
	h.nodes[2].cut = true
	h.appendUnreplicated("uncommitted")
	read, err := h.partition(1).Read(0, 1<<20, true, -1)
	if err != nil || len(read.Records) == 0 || read.HighWatermark != 0 {
		t.Fatalf("read %+v, %v: the canary does not expose the uncommitted record", read, err)
	}
}

func TestCanaryAcksBeforeFollowerSyncAcknowledgesUnsyncedCopies(t *testing.T) {
	h := newHarness(t, 3, nil, CanaryAcksBeforeFollowerSync)
	h.setLeader(1, []int32{1, 2, 3})
	early := false
	for range 20 {
		offset, outcome := h.produce("x")
		h.runUntil("acknowledged", func() bool { return outcome.answered })
		for _, id := range []int32{2, 3} {
			early = early || outcome.syncedAtAnswer[id] <= offset
		}
		h.run(time.Millisecond)
	}
	if !early {
		t.Fatal("every acknowledgement waited for the followers' syncs: the canary plants nothing")
	}
}

func TestCanaryDeleteWithoutFollowersAnswersBeforeTheISRFollows(t *testing.T) {
	h := newHarness(t, 2, nil, CanaryDeleteWithoutFollowers)
	h.setLeader(1, []int32{1, 2})
	_, a := h.produce("a", "b")
	h.runUntil("acknowledged", func() bool { return a.answered })
	h.runUntil("the follower's high watermark", func() bool { return h.partition(2).HighWatermark() == 2 })
	h.nodes[2].cut = true
	answered := false
	h.partition(1).DeleteRecords(1, 10*time.Second, func(_ int64, err error) { answered = err == nil })
	h.runUntil("the answer", func() bool { return answered })
	if start := h.partition(2).LogStartOffset(); start != 0 {
		t.Fatalf("the follower followed to %d: the canary shows nothing", start)
	}
}
