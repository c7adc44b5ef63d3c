package harness

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/jepsen/history"
)

// groupMember is one member of a consumer group (kgo, eager range or
// cooperative-sticky assignment, manual commits). It records:
//   - a subscribe op each time kgo assigns it partitions, carrying the
//     member id, generation and every partition it then owns (under the
//     cooperative protocol kgo hands over only those added, and the
//     member keeps the rest across the rebalance; those revoked or lost
//     leave its set);
//   - a poll op for each PollFetches that returned records (recorded at
//     once after the poll returns, since a rebalance callback may run
//     while kgo waits for records, and ops of one process never overlap);
//   - a commit op for the offsets after what it polled, with the
//     generation it committed in.
//
// BlockRebalanceOnPoll keeps a rebalance from running between a poll and
// its commit, so the generation read before committing is the one kgo
// commits in.
type groupMember struct {
	name   string
	client *kgo.Client
	log    *historyLog
	group  string
	topic  string

	// mutex serializes this member's ops, recorded from its loop and
	// from kgo's rebalance callback.
	mutex   sync.Mutex
	process int
	// callbackFailure is what went wrong recording from the callback,
	// reported by the loop.
	callbackFailure error
	// cooperative says the group runs KIP-429's incremental protocol;
	// owned is what the member holds, kept up to date by the rebalance
	// callbacks (guarded by mutex).
	cooperative bool
	owned       map[history.TopicPartition]bool
	// instanceID is the member's group.instance.id, "" for a dynamic
	// member.
	instanceID string

	polled, commits, subscribes atomic.Int64
	running                     sync.WaitGroup

	// commitWrites counts OffsetCommit requests written to any broker.
	// kgo retries a commit inside CommitOffsetsSync (after
	// NOT_COORDINATOR, a timeout or a broken connection), and only the
	// last attempt's answer reaches us: a membership refusal then says
	// nothing of the earlier attempts, which may have been stored.
	commitWrites commitWriteCounter
}

// commitWriteCounter is a kgo hook counting OffsetCommit writes.
type commitWriteCounter struct{ writes atomic.Int64 }

// OnBrokerWrite implements kgo.HookBrokerWrite.
func (c *commitWriteCounter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, _ error) {
	if key == kmsg.OffsetCommit.Int16() {
		c.writes.Add(1)
	}
}

// newGroupMember makes a member; instanceID, when set, is its
// group.instance.id (a static member, KIP-345). The extra options come
// after the member's own (a churned member's crashable dialer).
func newGroupMember(cluster *Cluster, log *historyLog, group, topic, name string, balancer Balancer, instanceID string, extra ...kgo.Opt) (*groupMember, error) {
	m := &groupMember{
		name: name, log: log, group: group, topic: topic, process: log.newProcess(),
		cooperative: balancer == BalancerCooperativeSticky, owned: map[history.TopicPartition]bool{},
		instanceID: instanceID,
	}
	balancers := kgo.Balancers(kgo.RangeBalancer())
	if m.cooperative {
		balancers = kgo.Balancers(kgo.CooperativeStickyBalancer())
	}
	options := []kgo.Opt{
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		balancers,
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.OnPartitionsAssigned(m.assigned),
		kgo.SessionTimeout(groupSessionTimeout),
		kgo.HeartbeatInterval(groupHeartbeatInterval),
		kgo.RebalanceTimeout(groupRebalanceTimeout),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(consumerFetchWaitMax),
		kgo.WithHooks(&m.commitWrites),
	}
	if instanceID != "" {
		options = append(options, kgo.InstanceID(instanceID))
	}
	if m.cooperative {
		options = append(options,
			kgo.OnPartitionsRevoked(m.revoked),
			kgo.OnPartitionsLost(m.lost))
	}
	options = append(options, extra...)
	client, err := kgo.NewClient(cluster.ClientOptions(options...)...)
	if err != nil {
		return nil, fmt.Errorf("harness: group member %s: %w", name, err)
	}
	m.client = client
	return m, nil
}

// assigned records the assignment kgo just made, as an instant
// subscribe op: the whole of it under the eager protocol; under the
// cooperative one, what the member kept and what it was just given.
func (m *groupMember) assigned(_ context.Context, client *kgo.Client, assignment map[string][]int32) {
	memberID, generation := client.GroupMetadata()
	m.recordAssignment(memberID, generation, assignment)
}

// recordAssignment is assigned once kgo has said who the member is.
func (m *groupMember) recordAssignment(memberID string, generation int32, assignment map[string][]int32) {
	if m.instanceID != "" {
		// A static member is named by its instance, as the simulator's
		// clients name it: one that takes a closed one's place (KIP-345)
		// gets a new member id but the same generation and partitions,
		// and must not count as a second owner of them.
		memberID = m.instanceID
	}
	m.mutex.Lock()
	defer m.mutex.Unlock()
	if !m.cooperative {
		clear(m.owned)
	}
	for topic, numbers := range assignment {
		for _, number := range numbers {
			m.owned[history.TopicPartition{Topic: topic, Partition: number}] = true
		}
	}
	partitions := slices.Collect(maps.Keys(m.owned))
	sortPartitions(partitions)
	op, err := m.log.invoke(m.process, history.FuncSubscribe, history.Payload{Topics: []string{m.topic}})
	if err != nil {
		m.callbackFailure = err
		return
	}
	op.ok(history.Payload{Assigned: partitions, Group: m.group, MemberID: memberID, Generation: max(generation, 0)})
	m.subscribes.Add(1)
}

// revoked forgets the partitions a cooperative rebalance took from the
// member: it gave them up before anyone else may be assigned them.
func (m *groupMember) revoked(_ context.Context, _ *kgo.Client, revoked map[string][]int32) {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	for topic, numbers := range revoked {
		for _, number := range numbers {
			delete(m.owned, history.TopicPartition{Topic: topic, Partition: number})
		}
	}
}

// lost forgets every partition: the member's session ended (it was
// fenced, or its generation is gone), so it owns nothing until the next
// assignment.
func (m *groupMember) lost(context.Context, *kgo.Client, map[string][]int32) {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	clear(m.owned)
}

func (m *groupMember) start(ctx context.Context, failed func(error)) {
	m.running.Add(1)
	go func() {
		defer m.running.Done()
		if err := m.run(ctx); err != nil {
			failed(err)
		}
	}()
}

func (m *groupMember) run(ctx context.Context) error {
	for ctx.Err() == nil {
		pollContext, cancel := context.WithTimeout(ctx, consumerPollTimeout)
		fetches := m.client.PollFetches(pollContext)
		cancel()
		polls, received := pollsOf(fetches, nil)
		if received > 0 {
			if err := m.recordPoll(polls); err != nil {
				return err
			}
			m.polled.Add(int64(received))
			if err := m.commit(ctx, polls); err != nil {
				return err
			}
		}
		m.client.AllowRebalance()
	}
	return nil
}

func (m *groupMember) recordPoll(polls []history.Poll) error {
	m.mutex.Lock()
	defer m.mutex.Unlock()
	if m.callbackFailure != nil {
		return m.callbackFailure
	}
	op, err := m.log.invoke(m.process, history.FuncPoll, history.Payload{})
	if err != nil {
		return err
	}
	op.ok(history.Payload{Polls: polls})
	return nil
}

// commit stores the offsets after the polled records, synchronously, and
// records the outcome: ok when every partition was stored, fail when the
// coordinator refused them all for the membership (the commit certainly
// did not happen), info otherwise.
func (m *groupMember) commit(ctx context.Context, polls []history.Poll) error {
	_, generation := m.client.GroupMetadata()
	offsets := map[string]map[int32]kgo.EpochOffset{}
	var commits []history.Commit
	for _, poll := range polls {
		next := poll.Records[len(poll.Records)-1].Offset + 1
		if offsets[poll.Partition.Topic] == nil {
			offsets[poll.Partition.Topic] = map[int32]kgo.EpochOffset{}
		}
		offsets[poll.Partition.Topic][poll.Partition.Partition] = kgo.EpochOffset{Epoch: -1, Offset: next}
		commits = append(commits, history.Commit{Group: m.group, Partition: poll.Partition, Offset: next, Generation: max(generation, 0)})
	}
	m.mutex.Lock()
	op, err := m.log.invoke(m.process, history.FuncCommit, history.Payload{Commits: commits})
	m.mutex.Unlock()
	if err != nil {
		return err
	}
	commitContext, cancel := context.WithTimeout(context.WithoutCancel(ctx), groupCommitTimeout)
	defer cancel()
	var outcome history.Type
	var reason string
	writesBefore := m.commitWrites.writes.Load()
	m.client.CommitOffsetsSync(commitContext, offsets, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		outcome, reason = commitOutcome(resp, err)
	})
	if attempts := m.commitWrites.writes.Load() - writesBefore; outcome == history.Fail && attempts > 1 {
		// The refusal answers the last attempt only; an earlier one
		// may have been stored before its answer was lost.
		outcome = history.Info
		reason = fmt.Sprintf("%s, after %d attempts (an earlier attempt's outcome is unknown)", reason, attempts)
	}
	m.mutex.Lock()
	defer m.mutex.Unlock()
	switch outcome {
	case history.OK:
		op.ok(history.Payload{Commits: commits})
		m.commits.Add(1)
	case history.Fail:
		op.fail(reason)
	default:
		op.info(reason)
		m.process = m.log.newProcess()
	}
	return nil
}

// commitOutcome reads an OffsetCommit answer.
func commitOutcome(resp *kmsg.OffsetCommitResponse, err error) (history.Type, string) {
	if err != nil {
		return history.Info, err.Error()
	}
	refused, stored, total := 0, 0, 0
	var last error
	for _, topic := range resp.Topics {
		for _, partition := range topic.Partitions {
			total++
			switch code := kerr.ErrorForCode(partition.ErrorCode); {
			case code == nil:
				stored++
			case membershipRefusal(code):
				refused++
				last = code
			default:
				last = code
			}
		}
	}
	switch {
	case total > 0 && stored == total:
		return history.OK, ""
	case total > 0 && refused == total:
		return history.Fail, last.Error()
	case last != nil:
		return history.Info, last.Error()
	}
	return history.Info, "empty OffsetCommit answer"
}

// membershipRefusal: the coordinator refused a commit because of the
// member's standing, before storing anything.
func membershipRefusal(err error) bool {
	return errors.Is(err, kerr.IllegalGeneration) || errors.Is(err, kerr.UnknownMemberID) ||
		errors.Is(err, kerr.RebalanceInProgress) || errors.Is(err, kerr.FencedInstanceID)
}

func (m *groupMember) stop() {
	m.running.Wait()
	m.client.Close()
}

// sortPartitions sorts by topic, then partition number.
func sortPartitions(partitions []history.TopicPartition) {
	slices.SortFunc(partitions, history.TopicPartition.Compare)
}
