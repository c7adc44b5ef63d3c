package compat

import (
	"context"
	"testing"
)

// TestSluiceConsumeExitIdleCountsFromTheAssignment: `sluice consume
// --exit-idle 1s` prints every record there is and stops, as a consumer
// group member too, although a new group is assigned its partitions only
// after the broker's group.initial.rebalance.delay.ms (3s): the idle clock
// starts at the assignment, not at the start.
func TestSluiceConsumeExitIdleCountsFromTheAssignment(t *testing.T) {
	t.Parallel()
	broker := StartBroker(t, Options{})
	binary := BuildBinary(t)
	const topic = "idle"
	createTopicWithFranzGo(t, broker.Addr(), topic, 2)
	produced := produceToPartitions(t, broker.Addr(), topic, []int{4, 3})
	for _, args := range [][]string{{}, {"--group", "idle-group"}} {
		args = append([]string{"consume", "--brokers", broker.Addr(), "--topic", topic, "--exit-idle", "1s"}, args...)
		printed := parseCLIValues(t, topic, runOutsideTool(t, nil, binary, args...))
		if len(printed) != len(produced) {
			t.Fatalf("sluice %s printed %d records, want all %d: %v", describeArgs(args), len(printed), len(produced), printed)
		}
		reportProblems(t, describeArgs(args), checkPrefixes(produced, nil, printed))
	}
}

// TestSluiceConsumeSaysATopicIsMissing: consuming a topic that does not
// exist waits for it, as Kafka's console consumer does, but says so, so
// that a mistyped name does not pass for an empty topic; and looking does
// not create it.
func TestSluiceConsumeSaysATopicIsMissing(t *testing.T) {
	t.Parallel()
	broker := StartBroker(t, Options{})
	binary := BuildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	for range 2 {
		runSluice(ctx, t, binary, "consume", "--brokers", broker.Addr(), "--topic", "missing", "--exit-idle", "1s").
			expect(t, 0, "^$", "^sluice consume: topic missing does not exist; waiting for it\n$")
	}
}
