package controller

import (
	"slices"
	"testing"

	"sluice/core"
)

// buggifyAll switches on every BUGGIFY site of the controller, firing
// each time it is reached.
func (tc *testController) buggifyAll() {
	tc.c.w.Buggify = core.NewBuggify(&testEntropy{state: 7}, 1, 1)
}

// TestLeaderNotPreferredElectsAnyEligibleISRMember switches on the
// BUGGIFY site controller-leader-not-preferred and fences a broker that
// leads many partitions: some of them get a leader other than the first
// eligible ISR member in replica order (what Kafka would pick), and every
// new leader is still an unfenced member of its unchanged ISR.
func TestLeaderNotPreferredElectsAnyEligibleISRMember(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2, 3, 4)
	tc.buggifyAll()
	topic := tc.mustCreate("t", 24, 3)
	before := snapshotPartitions(topic)
	const leaving = 1
	if hb := tc.heartbeat(leaving, heartbeatOptions{wantFence: true}); hb.ErrorCode != 0 {
		t.Fatalf("fencing broker %d: error %d", leaving, hb.ErrorCode)
	}
	img := tc.c.Image()
	requireLeadershipInvariants(t, img)
	reelected, notFirst := 0, 0
	for i, p := range img.Topics["t"].Partitions {
		if before[i].leader != leaving {
			if p.Leader != before[i].leader {
				t.Fatalf("partition %d changed leader %d -> %d though its leader stayed", i, before[i].leader, p.Leader)
			}
			continue
		}
		reelected++
		wantISR := minus(before[i].isr, []int32{leaving})
		if !slices.Equal(p.ISR, wantISR) {
			t.Fatalf("partition %d: ISR %v, want %v", i, p.ISR, wantISR)
		}
		if p.Leader < 0 || !slices.Contains(p.ISR, p.Leader) || img.Brokers[p.Leader].Fenced {
			t.Fatalf("partition %d is led by %d, ISR %v", i, p.Leader, p.ISR)
		}
		if p.LeaderEpoch != before[i].leaderEpoch+1 {
			t.Fatalf("partition %d: leader epoch %d, want %d", i, p.LeaderEpoch, before[i].leaderEpoch+1)
		}
		if p.Leader != firstInReplicaOrder(p.Replicas, p.ISR) {
			notFirst++
		}
	}
	if reelected < 4 || notFirst == 0 {
		t.Fatalf("%d partitions re-elected, %d of them not to the first eligible replica; want some of each", reelected, notFirst)
	}
}

// firstInReplicaOrder is the replica Kafka prefers: the first, in replica
// order, that is in the ISR.
func firstInReplicaOrder(replicas, isr []int32) int32 {
	for _, r := range replicas {
		if slices.Contains(isr, r) {
			return r
		}
	}
	return -1
}
