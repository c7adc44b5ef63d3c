package replica

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// The idempotent-producer state travels with the log: a follower records
// every replicated batch's producer, epoch and sequence, so that a retry
// sent to it after a failover is answered with the original offsets.
func TestRetryAfterFailoverIsADuplicate(t *testing.T) {
	h := newHarness(t, 3, nil)
	h.setLeader(1, []int32{1, 2, 3})
	const producerID = 7
	first, a := h.produceBatch(producerID, 0, 0, "a", "b")
	_, c := h.produceBatch(producerID, 0, 2, "c")
	h.runUntil("acknowledged", func() bool { return a.answered && c.answered })

	h.crash(1)
	h.setLeader(2, []int32{2, 3})
	h.awaitLeader()
	retry, err := h.partition(2).AppendAsLeader(h.batch(producerID, 0, 0, "a", "b"), true)
	if err != nil {
		t.Fatal(err)
	}
	if !retry.Duplicate || retry.BaseOffset != first || retry.LastOffset != first+1 {
		t.Fatalf("retry after failover: %+v, want a duplicate of offsets %d-%d", retry, first, first+1)
	}
	next, err := h.partition(2).AppendAsLeader(h.batch(producerID, 0, 3, "d"), true)
	if err != nil || next.Duplicate || next.BaseOffset != 3 {
		t.Fatalf("next batch: %+v, %v", next, err)
	}
	if _, err := h.partition(2).AppendAsLeader(h.batch(producerID, 0, 9, "gap"), true); err != kerr.OutOfOrderSequenceNumber {
		t.Fatalf("a sequence gap on the new leader: %v", err)
	}
}

// A follower whose log is behind the leader's log start restarts its log
// there; when that start lies inside a batch (DeleteRecords), it stores the
// batch whole and keeps the leader's start.
func TestFollowerBehindTheLeadersStartRestartsThere(t *testing.T) {
	h := newHarness(t, 2, nil)
	h.manualISR = true
	h.setLeader(1, []int32{1})
	// Cut off and fenced: a DeleteRecords waits for the log start of
	// every replica whose broker is alive.
	h.nodes[2].cut, h.nodes[2].fenced = true, true
	for _, values := range [][]string{{"a", "b", "c"}, {"d", "e", "f"}, {"g", "h", "i"}} {
		h.appendUnreplicated(values...)
	}
	leader := h.partition(1)
	h.runUntil("committed", func() bool { return leader.HighWatermark() == 9 })
	deleted := false
	leader.DeleteRecords(4, time.Second, func(start int64, err error) { deleted = err == nil && start == 4 })
	h.runUntil("records deleted", func() bool { return deleted })

	h.nodes[2].cut, h.nodes[2].fenced = false, false
	follower := h.partition(2)
	h.runUntil("the follower caught up", func() bool { return follower.LogEndOffset() == 9 })
	if start := follower.LogStartOffset(); start != 4 {
		t.Fatalf("follower's log start %d, want the leader's 4", start)
	}
	want := []string{"4:e@1", "5:f@1", "6:g@1", "7:h@1", "8:i@1"}
	if got := h.values(2); !slices.Equal(got, want) {
		t.Fatalf("follower's log %v, want %v", got, want)
	}
	h.requireSameLogs(1, 2)
	h.runUntil("the follower's high watermark", func() bool { return follower.HighWatermark() == 9 })
}

// The leader answers a fetch from below its log start, or from beyond its
// log end, OFFSET_OUT_OF_RANGE with its start and high watermark.
func TestFetchOutOfRange(t *testing.T) {
	h := newHarness(t, 2, nil)
	h.setLeader(1, []int32{1, 2})
	_, a := h.produce("a", "b")
	h.runUntil("acknowledged", func() bool { return a.answered })
	leader := h.partition(1)
	for _, offset := range []int64{3, -1} {
		result, err := leader.ServeFollowerFetch(FollowerFetch{
			ReplicaID: 2, BrokerEpoch: h.nodes[2].brokerEpoch, CurrentLeaderEpoch: 1,
			FetchOffset: offset, LastFetchedEpoch: -1, MaxBytes: 1 << 20, AtLeastOne: true,
		})
		if err != kerr.OffsetOutOfRange || result.LogStartOffset != 0 || result.HighWatermark != 2 {
			t.Fatalf("fetch at %d: %+v, %v", offset, result, err)
		}
	}
	// Fencing: an older or newer leader epoch than the leader's.
	for epoch, want := range map[int32]error{0: kerr.FencedLeaderEpoch, 2: kerr.UnknownLeaderEpoch} {
		_, err := leader.ServeFollowerFetch(FollowerFetch{ReplicaID: 2, BrokerEpoch: -1, CurrentLeaderEpoch: epoch, FetchOffset: 0, LastFetchedEpoch: -1, MaxBytes: 1})
		if err != want {
			t.Fatalf("fetch at leader epoch %d: %v, want %v", epoch, err, want)
		}
	}
	if _, err := leader.ServeFollowerFetch(FollowerFetch{ReplicaID: 9, BrokerEpoch: -1, CurrentLeaderEpoch: 1, LastFetchedEpoch: -1}); err != kerr.NotLeaderForPartition {
		t.Fatalf("fetch from a broker that is not a replica: %v", err)
	}
}

// Consumers never read at or above the high watermark; followers read up
// to the log end.
func TestConsumersReadBelowTheHighWatermarkOnly(t *testing.T) {
	h := newHarness(t, 2, nil)
	h.setLeader(1, []int32{1, 2})
	h.nodes[2].cut = true
	h.appendUnreplicated("uncommitted")
	leader := h.partition(1)
	read, err := leader.Read(0, 1<<20, true, -1)
	if err != nil || len(read.Records) != 0 || read.HighWatermark != 0 || read.LogEndOffset != 1 {
		t.Fatalf("consumer read %+v, %v: want nothing below the high watermark 0", read, err)
	}
	served, err := leader.ServeFollowerFetch(FollowerFetch{ReplicaID: 2, BrokerEpoch: h.nodes[2].brokerEpoch, CurrentLeaderEpoch: 1, LastFetchedEpoch: -1, MaxBytes: 1 << 20, AtLeastOne: true})
	if err != nil || len(served.Records) == 0 {
		t.Fatalf("follower read %+v, %v: want the uncommitted record", served, err)
	}
}

// A follower's high watermark never passes what it has synced under the
// durable default: if it became leader, it would expose it.
func TestFollowerHighWatermarkStaysBelowItsSyncedOffset(t *testing.T) {
	h := newHarness(t, 2, nil)
	h.setLeader(1, []int32{1, 2})
	follower := h.partition(2)
	follower.OnHighWatermark(func() {
		if follower.HighWatermark() > follower.SyncedOffset() {
			t.Fatalf("follower's high watermark %d above its synced offset %d", follower.HighWatermark(), follower.SyncedOffset())
		}
	})
	var outcomes []*ackOutcome
	for range 10 {
		_, o := h.produce("x")
		outcomes = append(outcomes, o)
		h.run(time.Millisecond)
	}
	h.runUntil("the follower knows everything committed", func() bool { return follower.HighWatermark() == 10 })
}
