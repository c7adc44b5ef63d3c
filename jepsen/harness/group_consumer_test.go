package harness

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"sluice/jepsen/history"
)

// A member's subscribe ops name every partition it owns in the generation:
// under the eager protocol each assignment is the whole of it; under the
// cooperative one kgo hands over only what was added, so the member adds
// it to what it kept, and what it revoked or lost leaves its set.
func TestGroupMemberRecordsWhatItOwns(t *testing.T) {
	p := func(n int32) history.TopicPartition { return history.TopicPartition{Topic: "t", Partition: n} }
	for _, tc := range []struct {
		balancer Balancer
		want     [][]history.TopicPartition
	}{
		{BalancerRange, [][]history.TopicPartition{{p(0), p(1)}, {p(2)}, {p(3)}}},
		{BalancerCooperativeSticky, [][]history.TopicPartition{{p(0), p(1)}, {p(1), p(2)}, {p(3)}}},
	} {
		t.Run(string(tc.balancer), func(t *testing.T) {
			log := newHistoryLog(time.Now())
			m := &groupMember{
				log: log, group: "g", topic: "t", process: log.newProcess(),
				cooperative: tc.balancer == BalancerCooperativeSticky, owned: map[history.TopicPartition]bool{},
			}
			m.recordAssignment("m-1", 1, map[string][]int32{"t": {1, 0}})
			if m.cooperative {
				m.revoked(t.Context(), nil, map[string][]int32{"t": {0}})
			}
			m.recordAssignment("m-1", 2, map[string][]int32{"t": {2}})
			if m.cooperative {
				m.lost(t.Context(), nil, nil)
			}
			m.recordAssignment("m-1", 4, map[string][]int32{"t": {3}})
			if m.callbackFailure != nil {
				t.Fatal(m.callbackFailure)
			}
			var got [][]history.TopicPartition
			var generations []int32
			for _, op := range log.ops() {
				if op.F == history.FuncSubscribe && op.Type == history.OK {
					got = append(got, op.Assigned)
					generations = append(generations, op.Generation)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("subscribe ops' assignments (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]int32{1, 2, 4}, generations); diff != "" {
				t.Fatalf("generations (-want +got):\n%s", diff)
			}
		})
	}
}

// A static member is named by its group.instance.id: the member that takes
// a closed one's place (KIP-345) has a new member id, but the same
// generation and partitions, and must not read as a second owner.
func TestStaticMembersAreNamedByInstance(t *testing.T) {
	log := newHistoryLog(time.Now())
	for _, memberID := range []string{"g-churn-1111", "g-churn-2222"} {
		m := &groupMember{log: log, group: "g", topic: "t", process: log.newProcess(), owned: map[history.TopicPartition]bool{}, instanceID: "g-churn"}
		m.recordAssignment(memberID, 5, map[string][]int32{"t": {0}})
	}
	var members []string
	for _, op := range log.ops() {
		if op.F == history.FuncSubscribe && op.Type == history.OK {
			members = append(members, op.MemberID)
		}
	}
	if diff := cmp.Diff([]string{"g-churn", "g-churn"}, members); diff != "" {
		t.Fatalf("subscribe ops' members (-want +got):\n%s", diff)
	}
}
