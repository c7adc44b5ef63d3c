package compat

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	// franzGoRangeColumn is the matrix column of the kgo group test with
	// the eager range assignor; "franz-go" runs kgo's default,
	// cooperative-sticky.
	franzGoRangeColumn = "franz-go (range)"
	// groupRecordsPerPartition is how many records each phase of the kgo
	// group test appends to every partition.
	groupRecordsPerPartition = 50
	// kgoPollRecordsMax bounds one poll, so a member commits often and a
	// rebalance finds it with little in hand.
	kgoPollRecordsMax = 20
)

// TestFranzGoGroupCooperativeSticky: three kgo members, cooperative-sticky.
func TestFranzGoGroupCooperativeSticky(t *testing.T) {
	t.Parallel()
	runFranzGoGroup(t, "franz-go", kgo.CooperativeStickyBalancer())
}

// TestFranzGoGroupRange: three kgo members, the eager range assignor.
func TestFranzGoGroupRange(t *testing.T) {
	t.Parallel()
	runFranzGoGroup(t, franzGoRangeColumn, kgo.RangeBalancer())
}

// runFranzGoGroup runs three kgo members of one group on a 6-partition
// topic, each polling, marking what it read and committing the marks
// synchronously before it lets a rebalance go on (BlockRebalanceOnPoll),
// while the ledger follows their assignments and reads:
//
//  1. A, B and C start together: every partition is assigned to exactly
//     one of them, two each;
//  2. records produced are all read, none twice;
//  3. C closes (LeaveGroup) while records are in flight: its partitions
//     move to A and B, and every record is still read, a second time only
//     if the first reader's commit of it failed;
//  4. once every record is committed, D starts: it gets two partitions
//     and reads each from its committed offset, none of the old records;
//  5. DescribeGroups and ListGroups show the Stable group, its protocol,
//     its members and their assignments; once all close, the group is
//     Empty and its committed offsets are the partitions' end offsets.
func runFranzGoGroup(t *testing.T, column string, balancer kgo.GroupBalancer) {
	steps := newClientSteps(t, column)
	broker := StartBroker(t, Options{})
	topic := "group-" + balancer.ProtocolName()
	group := "group-" + balancer.ProtocolName()
	ledger := newGroupLedger()
	members := map[string]*kgoMember{}
	start := func(step *testing.T, name string) {
		members[name] = startKgoMember(step, t, broker.Addr(), group, topic, balancer, name, ledger)
	}
	produce := func(t *testing.T) map[partitionOffset]string {
		produced := produceToPartitions(t, broker.Addr(), topic, sameCount(groupPartitions, groupRecordsPerPartition))
		ledger.addProduced(produced)
		return produced
	}
	waitAllRead := func(t *testing.T, phase string) {
		ledger.waitFor(t, phase+": every record read", ledger.allReadLocked)
	}
	checkSoFar := func(t *testing.T) {
		reportProblems(t, "as it happened", ledger.violations())
		reportProblems(t, "delivery", checkAtLeastOnce(ledger.producedSnapshot(), ledger.readsSnapshot()))
		for _, name := range slices.Sorted(maps.Keys(members)) {
			members[name].reportErrors(t)
		}
	}

	steps.step(groupJoinStep, true, func(t *testing.T) {
		createTopicWithFranzGo(t, broker.Addr(), topic, groupPartitions)
		for _, name := range []string{"A", "B", "C"} {
			start(t, name)
		}
		ledger.waitFor(t, "A, B and C to share the partitions", func() bool {
			return ledger.balancedAmongLocked(groupPartitions, "A", "B", "C")
		})
		t.Logf("assignment: %v", ledger.ownership())
		reportProblems(t, "assignment", ledger.violations())
	})
	steps.step(groupConsumeStep, true, func(t *testing.T) {
		produce(t)
		waitAllRead(t, "A, B and C")
		checkSoFar(t)
	})
	steps.step(groupLeaveStep, true, func(t *testing.T) {
		produce(t)
		held := ledger.ownership()["C"]
		members["C"].close() // with the records just produced in flight
		ledger.waitFor(t, "A and B to take C's partitions", func() bool {
			return ledger.balancedAmongLocked(groupPartitions, "A", "B")
		})
		t.Logf("C held %v; now %v", held, ledger.ownership())
		produce(t)
		waitAllRead(t, "A and B")
		checkSoFar(t)
	})
	steps.step(groupNewMemberStep, true, func(t *testing.T) {
		ends := endOffsetsOf(ledger.producedSnapshot())
		waitForCommitted(t, broker.Addr(), group, topic, ends)
		start(t, "D")
		ledger.waitFor(t, "A, B and D to share the partitions", func() bool {
			return ledger.balancedAmongLocked(groupPartitions, "A", "B", "D")
		})
		produce(t)
		waitAllRead(t, "A, B and D")
		checkSoFar(t)
		first := firstOffsetsRead(ledger.readsSnapshot(), "D")
		owned := ledger.ownership()["D"]
		for _, p := range owned {
			if got, ok := first[p]; !ok || got != ends[p] {
				t.Errorf("D's first read of partition %d is offset %d (read: %v), want the committed offset %d", p, got, ok, ends[p])
			}
		}
		if !slices.Equal(slices.Sorted(maps.Keys(first)), owned) {
			t.Errorf("D read partitions %v, owns %v", slices.Sorted(maps.Keys(first)), owned)
		}
	})
	steps.step(groupDescribeStep, false, func(t *testing.T) {
		d := describeGroup(t, broker.Addr(), group)
		matrix.record(column, groupAssignorRow, outcome(d.Protocol))
		if d.State != "Stable" || d.ProtocolType != "consumer" || d.Protocol != balancer.ProtocolName() {
			t.Errorf("DescribeGroups: state %q, protocol type %q, protocol %q; want Stable, consumer, %s",
				d.State, d.ProtocolType, d.Protocol, balancer.ProtocolName())
		}
		if got, want := describedAssignment(t, d, topic), ledger.ownership(); !maps.EqualFunc(got, want, slices.Equal) {
			t.Errorf("DescribeGroups assignment by client id %v, the members say %v", got, want)
		}
		checkListedGroup(t, broker.Addr(), group, "Stable")
		for _, name := range slices.Sorted(maps.Keys(members)) {
			members[name].close()
		}
		if d := describeGroup(t, broker.Addr(), group); d.State != "Empty" || len(d.Members) != 0 {
			t.Errorf("after every member closed, DescribeGroups says state %q with %d members; want Empty with none", d.State, len(d.Members))
		}
		checkListedGroup(t, broker.Addr(), group, "Empty")
	})
	steps.step(groupCommitsStep, false, func(t *testing.T) {
		checkCommitted(t, broker.Addr(), group, topic, endOffsetsOf(ledger.producedSnapshot()))
		checkSoFar(t)
		t.Logf("%d records produced, %d reads; assignment events: %d", len(ledger.producedSnapshot()), len(ledger.readsSnapshot()), ledger.assignmentEvents())
	})
}

// kgoMember is one kgo group member polling in its own goroutine.
type kgoMember struct {
	name   string
	client *kgo.Client
	stop   context.CancelFunc
	done   chan struct{}
	closed bool

	mutex  sync.Mutex
	errors []error // what its polls and commits reported, unexpected all
}

// startKgoMember starts a member of group consuming topic: it polls at
// most kgoPollRecordsMax records, marks them, commits the marks
// synchronously, tells the ledger, and only then allows a rebalance. The
// member lives until close, or until lifetime (the whole test, not the
// step that started it) ends; t is the step, which a failure fails.
func startKgoMember(t *testing.T, lifetime testing.TB, address, group, topic string, balancer kgo.GroupBalancer, name string, ledger *groupLedger, extra ...kgo.Opt) *kgoMember {
	t.Helper()
	m := &kgoMember{name: name, done: make(chan struct{})}
	options := append([]kgo.Opt{
		kgo.SeedBrokers(address),
		kgo.ClientID(name),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.Balancers(balancer),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.SessionTimeout(groupSessionTimeout),
		kgo.HeartbeatInterval(groupHeartbeatInterval),
		kgo.RebalanceTimeout(groupRebalanceTimeout),
		kgo.AutoCommitMarks(),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, assigned map[string][]int32) {
			ledger.assigned(name, assigned[topic])
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, revoked map[string][]int32) {
			ledger.revoked(name, revoked[topic])
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
			if len(lost[topic]) > 0 {
				m.fail(fmt.Errorf("lost partitions %v (a fatal group error: the broker fenced it)", lost[topic]))
			}
			ledger.revoked(name, lost[topic])
		}),
	}, extra...)
	client, err := kgo.NewClient(options...)
	if err != nil {
		t.Fatalf("kgo.NewClient for member %s: %v", name, err)
	}
	m.client = client
	ctx, stop := context.WithCancel(context.Background())
	m.stop = stop
	go m.run(ctx, ledger)
	lifetime.Cleanup(m.close)
	return m
}

func (m *kgoMember) run(ctx context.Context, ledger *groupLedger) {
	defer close(m.done)
	for ctx.Err() == nil {
		fetches := m.client.PollRecords(ctx, kgoPollRecordsMax)
		for _, fetchError := range fetches.Errors() {
			if !errors.Is(fetchError.Err, context.Canceled) && !errors.Is(fetchError.Err, kgo.ErrClientClosed) {
				m.fail(fmt.Errorf("poll %s/%d: %w", fetchError.Topic, fetchError.Partition, fetchError.Err))
			}
		}
		if records := fetches.Records(); len(records) > 0 {
			m.client.MarkCommitRecords(records...)
			commitContext, cancel := context.WithTimeout(context.Background(), groupCommitTimeout)
			err := m.client.CommitMarkedOffsets(commitContext)
			cancel()
			if err != nil {
				m.fail(fmt.Errorf("committing %d records: %w", len(records), err))
			}
			reads := make([]groupRead, len(records))
			for i, r := range records {
				reads[i] = groupRead{at: partitionOffset{r.Partition, r.Offset}, value: string(r.Value), committed: err == nil}
			}
			ledger.read(m.name, true, reads...)
		}
		m.client.AllowRebalance()
	}
}

func (m *kgoMember) fail(err error) {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	m.errors = append(m.errors, err)
}

// reportErrors fails t with what the member's client reported, if
// anything: in these tests no poll or commit has reason to fail.
func (m *kgoMember) reportErrors(t *testing.T) {
	t.Helper()
	m.mutex.Lock()
	defer m.mutex.Unlock()
	for _, err := range m.errors[:min(len(m.errors), problemsShownMax)] {
		t.Errorf("member %s: %v", m.name, err)
	}
}

// close stops the member's polling and closes its client, which leaves
// the group (LeaveGroup) after revoking its partitions.
func (m *kgoMember) close() {
	if m.closed {
		return
	}
	m.closed = true
	m.stop()
	<-m.done
	m.client.Close()
}

// firstOffsetsRead is the first offset member read in each partition.
func firstOffsetsRead(reads []groupRead, member string) map[int32]int64 {
	first := map[int32]int64{}
	for _, r := range reads {
		if _, seen := first[r.at.Partition]; r.member == member && !seen {
			first[r.at.Partition] = r.at.Offset
		}
	}
	return first
}

// waitForCommitted polls FetchOffsets until the group's committed offsets
// in topic are want. Members commit before they report a read, so this
// is normally true at once.
func waitForCommitted(t *testing.T, address, group, topic string, want map[int32]int64) {
	t.Helper()
	waitUntil(t, fmt.Sprintf("group %s to have committed %v", group, want), func() (bool, string) {
		got := fetchCommitted(t, address, group, topic)
		return maps.Equal(got, want), fmt.Sprintf("committed %v", got)
	})
}

// checkListedGroup fails t unless ListGroups lists group as a consumer
// group in state.
func checkListedGroup(t *testing.T, address, group, state string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	listed, err := kadm.NewClient(newFranzGoClient(t, address)).ListGroups(ctx)
	if err != nil {
		t.Fatalf("kadm ListGroups: %v", err)
	}
	g, ok := listed[group]
	if !ok {
		t.Errorf("ListGroups does not list %s; it lists %v", group, listed.Groups())
		return
	}
	if g.ProtocolType != "consumer" || g.State != state {
		t.Errorf("ListGroups lists %s with protocol type %q, state %q; want consumer, %s", group, g.ProtocolType, g.State, state)
	}
}
