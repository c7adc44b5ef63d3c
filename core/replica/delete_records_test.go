package replica

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/sim/simdisk"
)

// A DeleteRecords is answered only once every other ISR member has
// followed the leader's new log start: a follower that took over before
// that would serve the deleted records again. A follower that cannot
// fetch holds the answer up until it is out of the ISR and its broker is
// fenced (until then it may be a deposed leader still serving reads), and
// it rejoins the ISR only once it starts where the leader does.
func TestDeleteRecordsWaitsForTheISRToFollowTheStart(t *testing.T) {
	h, leader := fourCommittedOnThree(t)

	h.nodes[3].cut = true
	var low int64 = -2
	var answer error
	answered := false
	leader.DeleteRecords(3, 10*time.Second, func(start int64, err error) { low, answer, answered = start, err, true })
	h.runUntil("n2 follows the leader's start", func() bool { return h.partition(2).LogStartOffset() == 3 })
	h.run(200 * time.Millisecond)
	if answered {
		t.Fatalf("DeleteRecords answered %d, %v while n3, in the ISR, still starts at %d", low, answer, h.partition(3).LogStartOffset())
	}

	// Out of the ISR but on a live broker, n3 could still serve reads
	// to clients as stale as itself: the answer waits on.
	h.setISR([]int32{1, 2})
	h.run(200 * time.Millisecond)
	if answered {
		t.Fatalf("DeleteRecords answered %d, %v while n3, out of the ISR but alive, still starts at 0", low, answer)
	}
	// The controller fences n3's broker: every replica that could serve
	// reads has the new start.
	h.nodes[3].fenced = true
	h.runUntil("the answer", func() bool { return answered })
	if answer != nil || low != 3 {
		t.Fatalf("DeleteRecords answered %d, %v; want the new start 3", low, answer)
	}
	if isr := leader.ISR(); slices.Contains(isr, 3) {
		t.Fatalf("answered with n3 still in the ISR %v", isr)
	}

	// n3 comes back, unfenced, caught up but still starting at 0: that
	// fetch does not get it into the ISR; the next, once it has
	// followed, does.
	h.nodes[3].fenced = false
	position, ready := h.partition(3).FetchPosition()
	if !ready || position.LogStartOffset != 0 || position.FetchOffset != 4 {
		t.Fatalf("n3's fetch position %+v (ready %v), want a caught-up fetch from start 0", position, ready)
	}
	proposed := len(h.proposals)
	if _, err := leader.ServeFollowerFetch(FollowerFetch{
		ReplicaID: 3, BrokerEpoch: h.nodes[3].brokerEpoch, CurrentLeaderEpoch: position.CurrentLeaderEpoch,
		FetchOffset: position.FetchOffset, LastFetchedEpoch: position.LastFetchedEpoch,
		LogStartOffset: position.LogStartOffset, MaxBytes: 1 << 20, AtLeastOne: true,
	}); err != nil {
		t.Fatal(err)
	}
	if len(h.proposals) != proposed {
		t.Fatalf("the leader proposed %+v for n3, which still starts at 0", h.proposals[proposed:])
	}
	h.nodes[3].cut = false
	h.runUntil("n3 back in the ISR", func() bool { return slices.Contains(leader.ISR(), 3) })
	if start := h.partition(3).LogStartOffset(); start != 3 {
		t.Fatalf("n3 joined the ISR starting at %d, want the leader's 3", start)
	}
}

// fourCommittedOnThree starts three replicas led by n1 and commits four
// records, every replica's high watermark past them.
func fourCommittedOnThree(t *testing.T) (*harness, *Partition) {
	h := newHarness(t, 3, nil)
	h.setLeader(1, []int32{1, 2, 3})
	_, a := h.produce("a", "b", "c", "d")
	h.runUntil("acknowledged", func() bool { return a.answered })
	leader := h.partition(1)
	h.runUntil("every replica's high watermark", func() bool {
		return leader.HighWatermark() == 4 && h.partition(2).HighWatermark() == 4 && h.partition(3).HighWatermark() == 4
	})
	return h, leader
}

// A leader that stops leading fails the DeleteRecords it holds.
func TestDeleteRecordsFailsWhenLeadershipEnds(t *testing.T) {
	h := newHarness(t, 2, nil)
	h.setLeader(1, []int32{1, 2})
	_, a := h.produce("a", "b")
	h.runUntil("acknowledged", func() bool { return a.answered })
	h.runUntil("the follower's high watermark", func() bool { return h.partition(2).HighWatermark() == 2 })
	h.nodes[2].cut = true
	var answer error
	answered := false
	h.partition(1).DeleteRecords(1, 10*time.Second, func(_ int64, err error) { answer, answered = err, true })
	h.run(100 * time.Millisecond)
	if answered {
		t.Fatalf("answered %v before the follower followed", answer)
	}
	h.setLeader(2, []int32{2})
	h.runUntil("the answer", func() bool { return answered })
	if answer != kerr.NotLeaderForPartition {
		t.Fatalf("DeleteRecords answered %v after the leadership moved, want NOT_LEADER_OR_FOLLOWER", answer)
	}
}

// A follower the leader has proposed to add to the ISR may be elected
// once the proposal commits: a DeleteRecords waits for it too.
func TestDeleteRecordsWaitsForAFollowerBeingAddedToTheISR(t *testing.T) {
	h := newHarness(t, 2, nil)
	h.manualISR = true
	h.setLeader(1, []int32{1})
	_, a := h.produce("a", "b", "c")
	h.runUntil("acknowledged", func() bool { return a.answered })
	leader := h.partition(1)
	h.runUntil("the leader proposes adding n2", func() bool { return len(h.proposals) == 1 })
	if isr := leader.ISR(); !slices.Equal(isr, []int32{1}) {
		t.Fatalf("committed ISR %v, want the leader alone while the proposal is pending", isr)
	}
	h.nodes[2].cut = true
	answered := false
	var low int64
	leader.DeleteRecords(2, 10*time.Second, func(start int64, err error) { low, answered = start, err == nil })
	h.run(200 * time.Millisecond)
	if answered {
		t.Fatalf("DeleteRecords answered %d while n2, proposed for the ISR, still starts at %d", low, h.partition(2).LogStartOffset())
	}
	h.nodes[2].cut = false
	h.runUntil("the answer", func() bool { return answered })
	if low != 2 || h.partition(2).LogStartOffset() != 2 {
		t.Fatalf("answered %d with n2 starting at %d, want both at 2", low, h.partition(2).LogStartOffset())
	}
}

// A follower reports only a log start its disk holds: one still in
// memory, which a power loss would take back, holds no DeleteRecords
// answer up. It makes the move durable by itself, without waiting for an
// append.
func TestAFollowerReportsOnlyADurableLogStart(t *testing.T) {
	h := newHarness(t, 2, nil)
	h.setLeader(1, []int32{1, 2})
	_, a := h.produce("a", "b", "c")
	h.runUntil("acknowledged", func() bool { return a.answered })
	follower := h.partition(2)
	h.runUntil("the follower's high watermark", func() bool { return follower.HighWatermark() == 3 })
	// The follower's syncs now take a second.
	h.nodes[2].machine.Disk.SetFaults(simdisk.Faults{SyncLatencyMin: time.Second, SyncLatencyMax: time.Second})
	answered := false
	h.partition(1).DeleteRecords(2, 10*time.Second, func(_ int64, err error) { answered = err == nil })
	h.runUntil("the follower follows the leader's start", func() bool { return follower.LogStartOffset() == 2 })
	if position, ready := follower.FetchPosition(); ready && position.LogStartOffset != 0 {
		t.Fatalf("the follower reports log start %d before its move is durable", position.LogStartOffset)
	}
	h.run(500 * time.Millisecond)
	if answered {
		t.Fatal("DeleteRecords answered while the follower's new start was not yet durable")
	}
	h.runUntil("the answer, once the follower's move is on its disk", func() bool { return answered })
}

// Two deletions in a row: the first is answered once the follower has
// followed it, with a low watermark the follower has reached, not the
// leader's start that the second moved further on.
func TestADeletionAnswersOnlyWhatTheReplicasReached(t *testing.T) {
	h := newHarness(t, 2, nil)
	h.setLeader(1, []int32{1, 2})
	_, a := h.produce("a", "b", "c", "d")
	h.runUntil("acknowledged", func() bool { return a.answered })
	follower := h.partition(2)
	h.runUntil("the follower's high watermark", func() bool { return follower.HighWatermark() == 4 })
	leader := h.partition(1)
	var answers []int64
	var followerStarts []int64
	leader.DeleteRecords(1, 10*time.Second, func(low int64, err error) {
		if err != nil {
			t.Fatalf("first deletion: %v", err)
		}
		answers = append(answers, low)
		followerStarts = append(followerStarts, follower.log.DurableStartOffset())
	})
	h.runUntil("the follower follows the first deletion", func() bool { return follower.LogStartOffset() == 1 })
	leader.DeleteRecords(3, 10*time.Second, func(low int64, err error) {
		if err != nil {
			t.Fatalf("second deletion: %v", err)
		}
		answers = append(answers, low)
		followerStarts = append(followerStarts, follower.log.DurableStartOffset())
	})
	h.runUntil("both answers", func() bool { return len(answers) == 2 })
	for i, low := range answers {
		if low > followerStarts[i] {
			t.Fatalf("answer %d promised %d while the follower's durable start was %d (answers %v)", i, low, followerStarts[i], answers)
		}
	}
	if answers[0] < 1 || answers[1] != 3 {
		t.Fatalf("answers %v, want the first at least 1 and the second 3", answers)
	}
}

// A replica a reassignment removed may still serve reads from a broker
// whose metadata lags, on its controller lease: a DeleteRecords answer
// waits until that lease must have run out (DepartedWatch), or until the
// broker is fenced.
func TestDeleteRecordsWaitsOutARemovedReplica(t *testing.T) {
	for _, fenced := range []bool{false, true} {
		h, leader := fourCommittedOnThree(t)
		// A reassignment takes n3 away (the leader epoch bumps); n3's
		// broker has not heard of it and keeps its replica as it was.
		h.replicas, h.isr = []int32{1, 2}, []int32{1, 2}
		h.leaderEpoch++
		h.partitionEpoch++
		h.applyTo(1)
		h.applyTo(2)
		h.nodes[3].cut = true
		h.nodes[3].fenced = fenced
		removedAt := h.kernel.Now()

		var low int64 = -2
		answered := false
		leader.DeleteRecords(3, time.Minute, func(start int64, err error) {
			if err != nil {
				t.Fatalf("DeleteRecords failed: %v", err)
			}
			low, answered = start, true
		})
		h.runUntil("the answer", func() bool { return answered })
		waited := time.Duration(h.kernel.Now() - removedAt)
		watch := leader.Config().DepartedWatch
		switch {
		case low != 3:
			t.Fatalf("answered %d, want 3", low)
		case !fenced && waited < watch:
			t.Fatalf("answered %v after n3's removal, while its broker is alive and may serve reads for %v", waited, watch)
		case fenced && waited >= watch:
			t.Fatalf("answered only after %v, though n3's broker is fenced", waited)
		}
	}
}
