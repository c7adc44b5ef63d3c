package replica

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// lastProposal is the newest ISR proposal, failing the test if none was
// made.
func (h *harness) lastProposal() ISRProposal {
	h.t.Helper()
	if len(h.proposals) == 0 {
		h.t.Fatal("no ISR proposal was made")
	}
	return h.proposals[len(h.proposals)-1]
}

func TestISRShrinksAfterTheLagTimeAndGrowsBackOnceCaughtUp(t *testing.T) {
	h := newHarness(t, 3, nil)
	h.setLeader(1, []int32{1, 2, 3})
	leader := h.partition(1)
	lag := leader.Config().ReplicaLagTimeMax

	h.nodes[3].cut = true
	_, stuck := h.produce("a")
	h.run(lag / 2)
	leader.MaybeShrinkISR()
	if len(h.proposals) != 0 {
		t.Fatalf("shrank within the lag time: %+v", h.proposals)
	}
	if stuck.answered {
		t.Fatal("acknowledged without an ISR member")
	}
	h.run(lag/2 + time.Second)
	leader.MaybeShrinkISR()
	shrink := h.lastProposal()
	wantShrink := []ISRMember{{BrokerID: 1, BrokerEpoch: -1}, {BrokerID: 2, BrokerEpoch: h.nodes[2].brokerEpoch}}
	if !slices.Equal(shrink.ISR, wantShrink) || shrink.LeaderEpoch != 1 || shrink.PartitionEpoch != 1 {
		t.Fatalf("shrink proposal %+v, want ISR %+v at epochs 1, 1", shrink, wantShrink)
	}
	h.runUntil("the shrink committed and the write with it", func() bool { return stuck.answered })
	if stuck.err != nil || !slices.Equal(leader.ISR(), []int32{1, 2}) {
		t.Fatalf("ack %v, ISR %v", stuck.err, leader.ISR())
	}

	// Node 3 is back: it catches up and is proposed with its broker epoch.
	h.nodes[3].cut = false
	h.runUntil("node 3 back in the ISR", func() bool { return slices.Equal(leader.ISR(), []int32{1, 2, 3}) })
	grow := h.lastProposal()
	wantGrow := []ISRMember{{BrokerID: 1, BrokerEpoch: -1}, {BrokerID: 2, BrokerEpoch: h.nodes[2].brokerEpoch}, {BrokerID: 3, BrokerEpoch: h.nodes[3].brokerEpoch}}
	if !slices.Equal(grow.ISR, wantGrow) || grow.PartitionEpoch != 2 {
		t.Fatalf("expansion proposal %+v, want ISR %+v at partition epoch 2", grow, wantGrow)
	}
	if len(h.proposals) != 2 {
		t.Fatalf("%d proposals, want the shrink and the expansion", len(h.proposals))
	}
}

// While an expansion is pending, the high watermark waits for the member it
// adds (the controller may already have committed it, and elect it).
func TestPendingExpansionCountsTheNewMember(t *testing.T) {
	h := newHarness(t, 2, nil)
	h.manualISR = true
	h.setLeader(1, []int32{1})
	h.runUntil("node 2 proposed", func() bool { return len(h.proposals) == 1 })
	h.nodes[2].cut = true
	_, waiting := h.produce("a")
	h.run(100 * time.Millisecond)
	if waiting.answered {
		t.Fatal("committed without the member a pending expansion adds")
	}
	// The controller refuses it: back to the committed ISR of one.
	h.partition(1).ISRProposalAnswered(h.lastProposal(), -1, kerr.IneligibleReplica)
	h.produce("b") // any change moves the high watermark again
	h.runUntil("committed by the leader alone", func() bool { return waiting.answered })
}

// KIP-903: a follower that restarted (a new broker epoch) must not join
// the ISR on the strength of what its earlier process fetched.
func TestRestartedFollowerCannotJoinWithItsOldEpoch(t *testing.T) {
	h := newHarness(t, 2, nil)
	h.manualISR = true
	h.setLeader(1, []int32{1})
	h.runUntil("node 2 proposed", func() bool { return len(h.proposals) == 1 })
	old := h.lastProposal()
	oldEpoch := h.nodes[2].brokerEpoch
	if old.ISR[1] != (ISRMember{BrokerID: 2, BrokerEpoch: oldEpoch}) {
		t.Fatalf("proposal %+v does not carry node 2's broker epoch %d", old, oldEpoch)
	}

	// Node 2 restarts and registers again before the proposal commits.
	h.crash(2)
	h.restart(2)
	h.commitProposal(1, old)
	if isr := h.partition(1).ISR(); !slices.Equal(isr, []int32{1}) {
		t.Fatalf("ISR %v: the controller took a member at a stale broker epoch", isr)
	}
	// A fetch still carrying the old epoch is refused outright.
	position, _ := h.partition(2).FetchPosition()
	_, err := h.partition(1).ServeFollowerFetch(FollowerFetch{
		ReplicaID: 2, BrokerEpoch: oldEpoch, CurrentLeaderEpoch: position.CurrentLeaderEpoch,
		FetchOffset: position.FetchOffset, LastFetchedEpoch: position.LastFetchedEpoch, MaxBytes: 1 << 20,
	})
	if !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("fetch at the old broker epoch: %v, want NOT_LEADER_OR_FOLLOWER", err)
	}
	// The new process catches up and is proposed at its new epoch.
	h.manualISR = false
	h.runUntil("node 2 in the ISR", func() bool { return slices.Equal(h.partition(1).ISR(), []int32{1, 2}) })
	if m := h.lastProposal().ISR[1]; m.BrokerEpoch != h.nodes[2].brokerEpoch || m.BrokerEpoch == oldEpoch {
		t.Fatalf("proposed %+v, want node 2's new epoch %d", m, h.nodes[2].brokerEpoch)
	}
}

// An answer to an ISR proposal that is not the pending one changes
// nothing, and neither does one that arrives after the leadership moved.
func TestStaleISRAnswersAreIgnored(t *testing.T) {
	h := newHarness(t, 2, nil)
	h.manualISR = true
	h.setLeader(1, []int32{1})
	h.runUntil("node 2 proposed", func() bool { return len(h.proposals) == 1 })
	proposal := h.lastProposal()
	leader := h.partition(1)
	leader.ISRProposalAnswered(ISRProposal{ISR: proposal.ISR, id: proposal.id + 7}, 5, nil)
	if !leader.ISRProposalPending(proposal) {
		t.Fatal("an answer to another proposal settled the pending one")
	}
	// Committed: the proposal stays pending until the metadata shows it.
	leader.ISRProposalAnswered(proposal, 2, nil)
	if !leader.ISRProposalPending(proposal) {
		t.Fatal("the answer, not the metadata, settled the proposal")
	}
	h.setISR([]int32{1, 2})
	if leader.ISRProposalPending(proposal) {
		t.Fatal("the metadata did not settle the proposal")
	}
}
