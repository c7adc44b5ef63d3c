package compat

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// restartCounts are the records appended to each partition before and
// between the restarts: a different number per partition, so committed
// offsets handed back for the wrong partition would show.
var (
	restartCountsBefore  = []int{3, 5, 7, 9, 11, 13}
	restartCountsBetween = []int{4, 4, 6, 6, 8, 8}
)

// TestFranzGoGroupOffsetsAcrossRestarts: a kgo member reads a 6-partition
// topic and commits what it read, then leaves. The broker is stopped with
// SIGTERM and restarted, more records are produced, and it is killed with
// SIGKILL and restarted: each time FetchOffsets must answer the very
// offsets committed, and DescribeGroups an Empty group. Then a new member
// of the group reads exactly the records after the commits, none before,
// and its own commits survive one more kill.
func TestFranzGoGroupOffsetsAcrossRestarts(t *testing.T) {
	t.Parallel()
	steps := newClientSteps(t, "franz-go")
	broker := StartBroker(t, Options{})
	const topic, group = "restart-offsets", "restart-offsets"
	ledger := newGroupLedger()
	balancer := kgo.CooperativeStickyBalancer()
	var committed map[int32]int64

	steps.step(groupTermStep, true, func(t *testing.T) {
		createTopicWithFranzGo(t, broker.Addr(), topic, groupPartitions)
		ledger.addProduced(produceToPartitions(t, broker.Addr(), topic, restartCountsBefore))
		first := startKgoMember(t, t, broker.Addr(), group, topic, balancer, "first", ledger)
		ledger.waitFor(t, "the first member to read every record", ledger.allReadLocked)
		first.close()
		first.reportErrors(t)
		committed = endOffsetsOf(ledger.producedSnapshot())
		checkCommitted(t, broker.Addr(), group, topic, committed)

		if err := broker.Restart(); err != nil { // Restart stops with SIGTERM
			t.Fatalf("restart after SIGTERM: %v", err)
		}
		checkCommitted(t, broker.Addr(), group, topic, committed)
		checkEmptyGroup(t, broker.Addr(), group)
	})
	steps.step(groupKillStep, true, func(t *testing.T) {
		// Records the group has not read, so that the offsets a commit
		// would reach differ from the ends a broken broker might answer.
		ledger.addProduced(produceToPartitions(t, broker.Addr(), topic, restartCountsBetween))
		broker.Kill()
		if err := broker.Restart(); err != nil {
			t.Fatalf("restart after SIGKILL: %v", err)
		}
		checkCommitted(t, broker.Addr(), group, topic, committed)
		checkEmptyGroup(t, broker.Addr(), group)
	})
	steps.step(groupRestartResumeStep, false, func(t *testing.T) {
		second := startKgoMember(t, t, broker.Addr(), group, topic, balancer, "second", ledger)
		ledger.waitFor(t, "the second member to read the records after the commits", ledger.allReadLocked)
		second.close()
		second.reportErrors(t)
		reads := ledger.readsSnapshot()
		reportProblems(t, "as it happened", ledger.violations())
		reportProblems(t, "delivery", checkExactlyOnce(ledger.producedSnapshot(), reads))
		first := firstOffsetsRead(reads, "second")
		if !maps.Equal(first, committed) {
			t.Errorf("the second member started reading at %v, want the committed offsets %v", first, committed)
		}
		ends := endOffsetsOf(ledger.producedSnapshot())
		checkCommitted(t, broker.Addr(), group, topic, ends)
		broker.Kill()
		if err := broker.Restart(); err != nil {
			t.Fatalf("restart after SIGKILL: %v", err)
		}
		checkCommitted(t, broker.Addr(), group, topic, ends)
		t.Logf("committed %v before the restarts, %v at the end", committed, ends)
	})
}

// checkEmptyGroup fails t unless DescribeGroups finds group Empty: known
// (its offsets were loaded back) but without members.
func checkEmptyGroup(t *testing.T, address, group string) {
	t.Helper()
	d := describeGroup(t, address, group)
	if d.State != "Empty" || len(d.Members) != 0 {
		members := make([]string, len(d.Members))
		for i, m := range d.Members {
			members[i] = fmt.Sprintf("%s(%s)", m.MemberID, m.ClientID)
		}
		slices.Sort(members)
		t.Errorf("DescribeGroups %s: state %q, members %v; want Empty without members", group, d.State, members)
	}
}
