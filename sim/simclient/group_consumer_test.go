package simclient

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"sluice/core/broker"
	"sluice/jepsen/checker"
	"sluice/jepsen/history"
	"sluice/sim/simdisk"
)

const testGroup = "readers"

// groupBroker sets the broker's group settings for runs lasting seconds.
func groupBroker(config *broker.Config) {
	config.OffsetsTopicPartitions = 3
	config.GroupMinSessionTimeout = 100 * time.Millisecond
	config.GroupInitialRebalanceDelay = 100 * time.Millisecond
}

func (c *cluster) groupConsumer(name string, configure ...func(*GroupConsumerConfig)) *GroupConsumer {
	config := GroupConsumerConfig{
		Group: testGroup, Topic: testTopic,
		SessionTimeout: time.Second, RebalanceTimeout: 2 * time.Second,
		FetchConfig: FetchConfig{FetchMaxWait: 100 * time.Millisecond},
	}
	for _, f := range configure {
		f(&config)
	}
	return NewGroupConsumer(c.client(name), config, c.recorder, c.processes)
}

// settled reports whether the consumers share one generation whose
// assignments cover every partition exactly once.
func settled(consumers ...*GroupConsumer) bool {
	var owned []history.TopicPartition
	generation := int32(-1)
	for _, g := range consumers {
		m := g.Membership()
		if !m.Stable || (generation >= 0 && m.Generation != generation) {
			return false
		}
		generation = m.Generation
		owned = append(owned, m.Assigned...)
	}
	slices.SortFunc(owned, history.TopicPartition.Compare)
	return slices.Equal(owned, []history.TopicPartition{tp(0), tp(1)})
}

// groupCommitted is tp's committed offset as its owner among consumers
// knows it.
func groupCommitted(tp history.TopicPartition, consumers ...*GroupConsumer) int64 {
	committed := history.OffsetUnknown
	for _, g := range consumers {
		committed = max(committed, g.Committed(tp))
	}
	return committed
}

// subscribes returns the ok subscribe completions in history order.
func subscribes(ops []history.Op) []history.Op {
	var found []history.Op
	for _, op := range completions(ops, history.FuncSubscribe) {
		if op.Type == history.OK {
			found = append(found, op)
		}
	}
	return found
}

func TestGroupConsumersSharePartitionsAndCommitWhatTheyRead(t *testing.T) {
	c := newCluster(t, 11, simdisk.Faults{}, withBrokerConfig(groupBroker))
	producer := NewProducer(c.client("p1"), ProducerConfig{Acks: -1}, c.recorder, c.processes)
	first := c.groupConsumer("c1")
	second := c.groupConsumer("c2", func(config *GroupConsumerConfig) { config.Assignors = []string{AssignorRoundRobin, AssignorRange} })
	first.Start()
	second.Start()
	c.runUntil(30*time.Second, "the group settling", func() bool { return settled(first, second) })
	c.sendAll(producer, 0, "a", 5)
	c.sendAll(producer, 1, "b", 5)
	c.runUntil(30*time.Second, "both partitions committed at 5", func() bool {
		return groupCommitted(tp(0), first, second) == 5 && groupCommitted(tp(1), first, second) == 5
	})

	ops := c.recorder.History()
	joined := subscribes(ops)
	if len(joined) < 2 {
		t.Fatalf("subscribes %+v, want both consumers to join", joined)
	}
	last := joined[len(joined)-2:]
	if last[0].Generation != last[1].Generation || last[0].MemberID == last[1].MemberID || len(last[0].Assigned)+len(last[1].Assigned) != 2 {
		t.Fatalf("last subscribes %+v, want two members of one generation splitting the two partitions", last)
	}
	if values := polledValues(ops, tp(0)); !slices.Equal(values, []string{"a-0", "a-1", "a-2", "a-3", "a-4"}) {
		t.Fatalf("group polled %v from partition 0, want a-0..a-4 in order", values)
	}
	if first.Stats().CommitsOK+second.Stats().CommitsOK == 0 {
		t.Fatal("no commit acknowledged")
	}
	if report := checker.Check(ops, checker.Options{}); !report.Valid {
		t.Fatalf("checker: %s", report)
	}
}

func TestCrashedConsumerIsExpiredAndItsPartitionsMove(t *testing.T) {
	c := newCluster(t, 12, simdisk.Faults{}, withBrokerConfig(groupBroker))
	producer := NewProducer(c.client("p1"), ProducerConfig{Acks: -1}, c.recorder, c.processes)
	first, second := c.groupConsumer("c1"), c.groupConsumer("c2")
	first.Start()
	second.Start()
	c.runUntil(30*time.Second, "the group settling", func() bool { return settled(first, second) })
	c.sendAll(producer, 0, "a", 3)
	c.sendAll(producer, 1, "b", 3)
	c.runUntil(30*time.Second, "everything committed", func() bool {
		return groupCommitted(tp(0), first, second) == 3 && groupCommitted(tp(1), first, second) == 3
	})
	generation := first.Membership().Generation
	second.client.Crash()
	c.runUntil(30*time.Second, "the survivor owning both partitions", func() bool { return settled(first) })
	if m := first.Membership(); m.Generation <= generation {
		t.Fatalf("survivor in generation %d, want past %d", m.Generation, generation)
	}
	c.sendAll(producer, 0, "a-late", 1)
	c.sendAll(producer, 1, "b-late", 1)
	c.runUntil(30*time.Second, "the survivor committing both", func() bool {
		return first.Committed(tp(0)) == 4 && first.Committed(tp(1)) == 4
	})
	ops := c.recorder.History()
	var crashed []history.Op
	for _, op := range ops {
		if op.Type == history.Info && strings.Contains(op.Error, "crashed") {
			crashed = append(crashed, op)
		}
	}
	if len(crashed) != 1 || !slices.Contains(second.Processes(), crashed[0].Process) {
		t.Fatalf("infos for crashes %+v, want one, of the crashed consumer", crashed)
	}
	if report := checker.Check(ops, checker.Options{}); !report.Valid {
		t.Fatalf("checker: %s", report)
	}
}

func TestStaticMemberRestartKeepsItsGenerationAndPartitions(t *testing.T) {
	c := newCluster(t, 13, simdisk.Faults{}, withBrokerConfig(groupBroker))
	first := c.groupConsumer("c1", func(config *GroupConsumerConfig) { config.InstanceID = "static-1" })
	second := c.groupConsumer("c2", func(config *GroupConsumerConfig) { config.InstanceID = "static-2" })
	first.Start()
	second.Start()
	c.runUntil(30*time.Second, "the group settling", func() bool { return settled(first, second) })
	before := second.Membership()
	second.client.Crash()
	second.client.Restart()
	c.runUntil(30*time.Second, "the static member back", func() bool { return settled(first, second) })
	after := second.Membership()
	if after.Generation != before.Generation || !slices.Equal(after.Assigned, before.Assigned) || after.MemberID == before.MemberID {
		t.Fatalf("static member rejoined as %+v, was %+v: want a new member id in the same generation with the same partitions", after, before)
	}
	ops := c.recorder.History()
	if report := checker.CheckGroupOwnership(ops, checker.Options{}); !report.Valid {
		t.Fatalf("checker: %s", report)
	}
	joined := subscribes(ops)
	if last := joined[len(joined)-1]; last.MemberID != "static-2" {
		t.Fatalf("last subscribe %+v, want the static member named by its instance id", last)
	}
}

func TestLeavingMemberHandsItsPartitionsOver(t *testing.T) {
	c := newCluster(t, 14, simdisk.Faults{}, withBrokerConfig(groupBroker))
	first, second := c.groupConsumer("c1"), c.groupConsumer("c2")
	first.Start()
	second.Start()
	c.runUntil(30*time.Second, "the group settling", func() bool { return settled(first, second) })
	second.Leave()
	// LeaveGroup makes the group rebalance at once, well within the
	// session timeout.
	c.runUntil(time.Second, "the survivor owning both partitions", func() bool { return settled(first) })
	if second.Stats().Leaves != 1 || second.Membership().MemberID != "" {
		t.Fatalf("leaver %+v %+v, want one leave and no membership", second.Stats(), second.Membership())
	}
	second.Start()
	c.runUntil(30*time.Second, "the group settling again", func() bool { return settled(first, second) })
}

func TestStalledConsumerCommitsWithAStaleGeneration(t *testing.T) {
	for _, canary := range []bool{false, true} {
		t.Run(fmt.Sprintf("canary=%v", canary), func(t *testing.T) {
			options := []clusterOption{withBrokerConfig(groupBroker)}
			if canary {
				options = append(options, withCanaries("group-stale-generation-commit"))
			}
			c := newCluster(t, 15, simdisk.Faults{}, options...)
			producer := NewProducer(c.client("p1"), ProducerConfig{Acks: -1}, c.recorder, c.processes)
			first, second := c.groupConsumer("c1"), c.groupConsumer("c2")
			first.Start()
			second.Start()
			c.runUntil(30*time.Second, "the group settling", func() bool { return settled(first, second) })
			zombie, survivor := first, second
			if len(first.Membership().Assigned) == 0 {
				zombie, survivor = second, first
			}
			owned := zombie.Membership().Assigned[0]
			c.sendAll(producer, owned.Partition, "x", 1)
			// Freeze the zombie as soon as its poll has the value and
			// before it commits it: the group moves on without it.
			c.runUntil(30*time.Second, "the zombie reading", func() bool { return zombie.Position(owned) == 1 })
			zombie.Stall(5 * time.Second)
			c.runUntil(30*time.Second, "the survivor owning both", func() bool { return settled(survivor) })
			c.run(6 * time.Second)
			ops := c.recorder.History()
			report := checker.Check(ops, checker.Options{})
			stale, _ := report.Class(checker.StaleGenerationCommit)
			if canary && stale.Failures == 0 {
				t.Fatalf("the zombie's commit was not caught: %s", report)
			}
			if !canary && !report.Valid {
				t.Fatalf("checker: %s", report)
			}
		})
	}
}
