package compat

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// What the consumer group tests share: their settings and matrix rows, the
// records they produce, and the kadm look-ups (committed offsets,
// DescribeGroups, ListGroups) that show what the broker itself says. The
// ledger of which member owned and read what is in groups_ledger_test.go,
// the checks run on it in groups_checks_test.go.

const (
	// groupPartitions is the partition count of every group test topic
	// but the CLI's: six splits evenly among two or three members.
	groupPartitions = 6
	// groupSessionTimeout is the members' session timeout: the broker's
	// group.min.session.timeout.ms, the lowest it accepts.
	groupSessionTimeout = 6 * time.Second
	// groupHeartbeatInterval is short so that members learn of a
	// rebalance (a heartbeat answered REBALANCE_IN_PROGRESS) quickly.
	groupHeartbeatInterval = 250 * time.Millisecond
	// groupRebalanceTimeout bounds how long the broker waits for members
	// to rejoin. Members that start together all join within the
	// broker's group.initial.rebalance.delay.ms (3 s, not settable),
	// which then waits once more, min(3 s, this minus 3 s): about 6 s
	// from the first join to the first generation.
	groupRebalanceTimeout = 10 * time.Second
	// groupWaitTimeout bounds each wait for a group to reach a state or
	// for records to arrive: several rebalances fit in it.
	groupWaitTimeout = 30 * time.Second
	// groupPollInterval spaces the questions asked of the broker while
	// waiting for something only it can tell (DescribeGroups): the
	// condition is polled, with a deadline, never slept on blindly.
	groupPollInterval = 100 * time.Millisecond
	// groupCommitTimeout bounds one synchronous offset commit.
	groupCommitTimeout = 10 * time.Second
	// twoMemberRecordsPerPartition is how many records the two-member
	// group tests (sarama, kafka-go, kafkajs) append to each partition.
	twoMemberRecordsPerPartition = 30
)

// The group checks, named once: they are the matrix's rows.
const (
	groupAssignorRow       = "group: assignor chosen"
	groupJoinStep          = "group: each partition assigned once"
	groupConsumeStep       = "group: every record read, none twice (unless its commit failed)"
	groupCommitsStep       = "group: commits = what was read (kadm FetchOffsets)"
	groupLeaveStep         = "group: member closes, its partitions move on"
	groupNewMemberStep     = "group: new member starts at committed offsets"
	groupDescribeStep      = "group: DescribeGroups/ListGroups (kadm)"
	groupRerunStep         = "group: second run reads nothing old"
	groupTermStep          = "group: offsets kept across SIGTERM restart"
	groupKillStep          = "group: offsets kept across SIGKILL restart"
	groupRestartResumeStep = "group: consumer resumes after restart"
)

var groupSteps = []string{
	groupAssignorRow, groupJoinStep, groupConsumeStep, groupCommitsStep, groupLeaveStep,
	groupNewMemberStep, groupDescribeStep, groupRerunStep, groupTermStep, groupKillStep,
	groupRestartResumeStep,
}

// millisecondsText is d as a whole number of milliseconds, the way Kafka
// settings (session.timeout.ms) are written.
func millisecondsText(d time.Duration) string {
	return strconv.FormatInt(d.Milliseconds(), 10)
}

// partitionOffset names one record of a group test's topic.
type partitionOffset struct {
	Partition int32
	Offset    int64
}

func (at partitionOffset) String() string { return fmt.Sprintf("%d/%d", at.Partition, at.Offset) }

// groupValue is the value of the record produced at a place: it names
// the place, so a record read anywhere says where it was written.
func groupValue(topic string, at partitionOffset) string {
	return fmt.Sprintf("%s-p%d-o%05d", topic, at.Partition, at.Offset)
}

// produceToPartitions appends counts[p] records to each partition p of
// topic with franz-go (acks=all, idempotent), and returns what landed
// where. Each value is groupValue of where it was meant to land, which
// the returned map checks.
func produceToPartitions(t testing.TB, address, topic string, counts []int) map[partitionOffset]string {
	t.Helper()
	client := newFranzGoClient(t, address, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	ends := listEndOffsets(t, address, topic)
	var records []*kgo.Record
	for partition, count := range counts {
		for i := range count {
			at := partitionOffset{int32(partition), ends[int32(partition)] + int64(i)}
			records = append(records, &kgo.Record{Topic: topic, Partition: at.Partition, Value: []byte(groupValue(topic, at))})
		}
	}
	results := client.ProduceSync(ctx, records...)
	if err := results.FirstErr(); err != nil {
		t.Fatalf("producing to %s: %v", topic, err)
	}
	produced := map[partitionOffset]string{}
	for _, r := range records {
		at := partitionOffset{r.Partition, r.Offset}
		if want := groupValue(topic, at); string(r.Value) != want {
			t.Fatalf("record %q landed at %v, where %q was expected", r.Value, at, want)
		}
		produced[at] = string(r.Value)
	}
	return produced
}

// sameCount is counts for produceToPartitions: n records to each of
// partitions.
func sameCount(partitions int32, n int) []int {
	counts := make([]int, partitions)
	for i := range counts {
		counts[i] = n
	}
	return counts
}

// endOffsetsOf is where each partition's log ends, from what was produced.
func endOffsetsOf(produced map[partitionOffset]string) map[int32]int64 {
	ends := map[int32]int64{}
	for at := range produced {
		ends[at.Partition] = max(ends[at.Partition], at.Offset+1)
	}
	return ends
}

// listEndOffsets asks the broker where each partition of topic ends.
func listEndOffsets(t testing.TB, address, topic string) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	listed, err := kadm.NewClient(newFranzGoClient(t, address)).ListEndOffsets(ctx, topic)
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		t.Fatalf("kadm ListEndOffsets %s: %v", topic, err)
	}
	ends := map[int32]int64{}
	listed.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
	return ends
}

// fetchCommitted asks the group's coordinator, through kadm FetchOffsets,
// for the group's committed offsets in topic, by partition.
func fetchCommitted(t testing.TB, address, group, topic string) map[int32]int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	fetched, err := kadm.NewClient(newFranzGoClient(t, address)).FetchOffsets(ctx, group)
	if err == nil {
		err = fetched.Error()
	}
	if err != nil {
		t.Fatalf("kadm FetchOffsets %s: %v", group, err)
	}
	committed := map[int32]int64{}
	fetched.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic {
			committed[o.Partition] = o.At
		}
	})
	return committed
}

// checkCommitted fails t unless the group's committed offsets in topic
// are exactly want, partition by partition.
func checkCommitted(t testing.TB, address, group, topic string, want map[int32]int64) {
	t.Helper()
	got := fetchCommitted(t, address, group, topic)
	if !maps.Equal(got, want) {
		t.Errorf("group %s's committed offsets in %s are %v, want %v", group, topic, got, want)
	}
}

// describeGroup asks DescribeGroups about one group through kadm.
func describeGroup(t testing.TB, address, group string) kadm.DescribedGroup {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	described, err := kadm.NewClient(newFranzGoClient(t, address)).DescribeGroups(ctx, group)
	if err != nil {
		t.Fatalf("kadm DescribeGroups %s: %v", group, err)
	}
	d, ok := described[group]
	if !ok {
		t.Fatalf("kadm DescribeGroups %s: no answer for the group", group)
	}
	if d.Err != nil {
		t.Fatalf("kadm DescribeGroups %s: %v", group, d.Err)
	}
	return d
}

// describedAssignment is each member's assigned partitions of topic as
// DescribeGroups reports them (decoded from the consumer protocol's
// assignment), keyed by client id, which the tests make unique.
func describedAssignment(t testing.TB, d kadm.DescribedGroup, topic string) map[string][]int32 {
	t.Helper()
	assignment := map[string][]int32{}
	for _, m := range d.Members {
		consumer, ok := m.Assigned.AsConsumer()
		if !ok {
			t.Fatalf("member %s (%s): assignment is not the consumer protocol's", m.MemberID, m.ClientID)
		}
		var partitions []int32
		for _, assigned := range consumer.Topics {
			if assigned.Topic == topic {
				partitions = append(partitions, assigned.Partitions...)
			}
		}
		slices.Sort(partitions)
		assignment[m.ClientID] = partitions
	}
	return assignment
}

// describedMemberIDs is the group's member ids, sorted: the same ids
// before and after means no member left or joined in between.
func describedMemberIDs(d kadm.DescribedGroup) []string {
	ids := make([]string, len(d.Members))
	for i, m := range d.Members {
		ids[i] = m.MemberID
	}
	slices.Sort(ids)
	return ids
}

// waitForStableGroup polls DescribeGroups until the group is Stable with
// members whose assignments cover every partition of topic once, and
// returns that description. For clients without rebalance callbacks.
func waitForStableGroup(t testing.TB, address, group, topic string, members int, partitions int32) kadm.DescribedGroup {
	t.Helper()
	var d kadm.DescribedGroup
	waitUntil(t, fmt.Sprintf("group %s to be Stable with %d members covering %d partitions", group, members, partitions), func() (bool, string) {
		d = describeGroup(t, address, group)
		assignment := describedAssignment(t, d, topic)
		met := d.State == "Stable" && len(d.Members) == members && coversOnce(assignment, partitions)
		return met, fmt.Sprintf("state %s, assignment by client id %v", d.State, assignment)
	})
	return d
}

// waitUntil asks condition every groupPollInterval until it holds, or
// fails t after groupWaitTimeout with what it waited for and the
// condition's last report. It is for what only the broker can tell
// (DescribeGroups, FetchOffsets): the test polls it with a deadline.
func waitUntil(t testing.TB, what string, condition func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(groupWaitTimeout)
	for {
		met, report := condition()
		if met {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s; last: %s", groupWaitTimeout, what, report)
		}
		time.Sleep(groupPollInterval) // between questions to the broker
	}
}

// coversOnce says assignment hands out each of partitions 0..n-1 exactly
// once, to members that all got some.
func coversOnce(assignment map[string][]int32, partitions int32) bool {
	seen := map[int32]int{}
	for _, assigned := range assignment {
		if len(assigned) == 0 {
			return false
		}
		for _, p := range assigned {
			seen[p]++
		}
	}
	if len(seen) != int(partitions) {
		return false
	}
	for p := range partitions {
		if seen[p] != 1 {
			return false
		}
	}
	return true
}
