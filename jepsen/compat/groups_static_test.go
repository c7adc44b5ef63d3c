package compat

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// staticLeaderGrowthStep is the matrix row of the static-membership test.
const staticLeaderGrowthStep = "static members: restart, then the topic grows"

// TestFranzGoStaticMembersRestartThenTopicGrows: two kgo members with a
// group.instance.id (KIP-345) read a 2-partition topic. Each member's
// process restarts in turn (closed without leaving, as a static member
// is, and started again with its instance id): the group does not
// rebalance, each gets its own partitions back, and whichever of them led
// is told so with SkipAssignment (JoinGroup v9, KIP-814). Then an operator
// adds two partitions: the leader, on its metadata refresh, must notice
// and rebalance, so that the records written there are read too.
//
// kgo would cope without v9 too: it recognises its own instance id in the
// leader id Kafka answers before v9, and leads anyway. What this checks is
// that the v9 answer (the members, SkipAssignment) is one a real client
// balances from, and that static membership and growth work end to end.
func TestFranzGoStaticMembersRestartThenTopicGrows(t *testing.T) {
	t.Parallel()
	steps := newClientSteps(t, "franz-go")
	broker := StartBroker(t, Options{})
	const topic, group = "static-grow", "static-grow"
	address := broker.Addr()
	ledger := newGroupLedger()
	balancer := kgo.RangeBalancer()
	start := func(t *testing.T, name string) *kgoMember {
		return startKgoMember(t, t, address, group, topic, balancer, name, ledger,
			kgo.InstanceID("instance-"+name), kgo.MetadataMinAge(500*time.Millisecond), kgo.MetadataMaxAge(time.Second))
	}
	steps.step(staticLeaderGrowthStep, true, func(t *testing.T) {
		createTopicWithFranzGo(t, address, topic, 2)
		members := map[string]*kgoMember{"a": start(t, "a"), "b": start(t, "b")}
		before := describedAssignment(t, waitForStableGroup(t, address, group, topic, 2, 2), topic)
		ledger.addProduced(produceToPartitions(t, address, topic, []int{5, 7}))
		ledger.waitFor(t, "every record read", ledger.allReadLocked)

		for _, name := range []string{"a", "b"} {
			members[name].close()
			members[name].reportErrors(t)
			members[name] = start(t, name)
			after := describedAssignment(t, waitForStableGroup(t, address, group, topic, 2, 2), topic)
			if !sameAssignment(before, after) {
				t.Fatalf("after %s restarted the group assigns %v, was %v: a static member's restart must not move partitions", name, after, before)
			}
		}

		ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
		defer cancel()
		grown, err := kadm.NewClient(newFranzGoClient(t, address)).CreatePartitions(ctx, 2, topic)
		if err == nil {
			err = grown.Error()
		}
		if err != nil {
			t.Fatalf("kadm CreatePartitions: %v", err)
		}
		ledger.addProduced(produceToPartitions(t, address, topic, []int{1, 1, 6, 8}))
		ledger.waitFor(t, "the new partitions read", ledger.allReadLocked)
		waitForStableGroup(t, address, group, topic, 2, 4)
		reportProblems(t, "as it happened", ledger.violations())
		for _, m := range members {
			m.reportErrors(t)
		}
	})
}

// sameAssignment reports whether two DescribeGroups assignments by client
// id give every client the same partitions.
func sameAssignment(a, b map[string][]int32) bool {
	if len(a) != len(b) {
		return false
	}
	for client, partitions := range a {
		other, ok := b[client]
		if !ok || len(other) != len(partitions) {
			return false
		}
		for i := range partitions {
			if partitions[i] != other[i] {
				return false
			}
		}
	}
	return true
}
