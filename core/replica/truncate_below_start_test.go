package replica

import "testing"

// TestATruncationBelowTheLogStartRestartsTheLog: a follower whose log
// starts above the point where it diverges from its leader (retention
// deleted the segments below) has nothing to keep. It must empty its log
// and start again at that point, as Kafka's follower does, rather than ask
// the log for a cut the log refuses, and ask again at every fetch, for
// good (cluster seed 85455: a page-cache topic whose new leader had lost
// everything in a crash).
func TestATruncationBelowTheLogStartRestartsTheLog(t *testing.T) {
	h := newHarness(t, 2, map[string]string{"flush.messages": "1000"})
	h.setLeader(1, []int32{1, 2})
	for _, value := range []string{"a", "b", "c", "d", "e", "f"} {
		_, outcome := h.produce(value)
		h.runUntil("acknowledged", func() bool { return outcome.answered })
	}
	h.runUntil("the follower caught up", func() bool { return h.end(2) == h.end(1) })
	follower := h.partition(2)
	if err := follower.log.AdvanceStartOffset(4); err != nil { // as retention would
		t.Fatal(err)
	}
	if err := follower.truncate(0, "a test's divergence below the log start"); err != nil {
		t.Fatalf("truncate below the log start: %v", err)
	}
	if start, end := follower.log.StartOffset(), follower.log.EndOffset(); start != 0 || end != 0 {
		t.Fatalf("after the cut the log spans [%d, %d), want an empty log starting at 0", start, end)
	}
}
