package replica

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A new leader whose high watermark has not reached the start of its epoch
// answers ListOffsets latest with OFFSET_NOT_AVAILABLE, and so a timestamp
// lookup landing at or past that lagging high watermark, or finding
// nothing, as Kafka's Partition.fetchOffsetForTimestamp does
// (maybeOffsetsError): clients retry it, where offset -1 (which Sluice
// answered) makes Java's offsetsForTimes say "no such record" of one that
// exists.
func TestATimestampLookupOnALaggingNewLeaderIsRetried(t *testing.T) {
	h := newHarness(t, 3, nil)
	h.setLeader(1, []int32{1, 2, 3})
	_, ack := h.produce("a")
	h.runUntil("a acknowledged", func() bool { return ack.answered })
	h.run(100 * 1000 * 1000) // 100ms: followers learn the high watermark
	ts := h.nodes[1].machine.Clock.Now().UnixMilli() + 1000
	h.kernel.RunUntil(h.kernel.Now() + 2*1000*1000*1000) // 2s later
	// "b" reaches the followers, but not the high watermark that covers it.
	if _, err := h.partition(1).AppendAsLeader(h.batch(-1, 0, 0, "b"), false); err != nil {
		t.Fatal(err)
	}
	h.pump()
	h.kernel.RunUntil(h.kernel.Now() + int64(harnessStep))
	p2 := h.partition(2)
	t.Logf("node 2: end %d high watermark %d", p2.LogEndOffset(), p2.HighWatermark())
	h.nodes[1].cut = true
	h.setLeader(2, []int32{1, 2, 3})
	t.Logf("node 2 leads: end %d high watermark %d", p2.LogEndOffset(), p2.HighWatermark())
	if _, _, err := p2.OffsetForTimestamp(TimestampLatest, -1); err != kerr.OffsetNotAvailable {
		t.Fatalf("latest: %v; want OFFSET_NOT_AVAILABLE (not the state this test needs)", err)
	}
	offset, at, err := p2.OffsetForTimestamp(ts, -1)
	t.Logf("by timestamp %d: offset %d timestamp %d err %v", ts, offset, at, err)
	if err != kerr.OffsetNotAvailable {
		t.Errorf("timestamp lookup answered offset %d, error %v; Kafka answers OFFSET_NOT_AVAILABLE", offset, err)
	}
}
