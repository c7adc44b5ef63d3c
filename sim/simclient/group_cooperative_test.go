package simclient

import (
	"slices"
	"testing"
	"time"

	"sluice/jepsen/checker"
	"sluice/jepsen/history"
	"sluice/sim/simdisk"
)

// cooperativeConsumer is a group consumer offering cooperative-sticky
// alone, so it rebalances cooperatively.
func (c *cluster) cooperativeConsumer(name string, configure ...func(*GroupConsumerConfig)) *GroupConsumer {
	return c.groupConsumer(name, append([]func(*GroupConsumerConfig){func(config *GroupConsumerConfig) {
		config.Assignors = []string{AssignorCooperativeSticky}
	}}, configure...)...)
}

// assignmentsOf lists, in history order, the assignments the ok subscribes
// of one consumer's processes recorded.
func assignmentsOf(ops []history.Op, g *GroupConsumer) [][]history.TopicPartition {
	var found [][]history.TopicPartition
	for _, op := range subscribes(ops) {
		if slices.Contains(g.Processes(), op.Process) {
			found = append(found, op.Assigned)
		}
	}
	return found
}

// stallAZombie starts two cooperative members, has the first read a
// record of its partition and freezes it for stall, past its session, as
// soon as it has, before it commits; it returns once the second owns both
// partitions. The first is the zombie, owned its partition.
func (c *cluster) stallAZombie(producer *Producer, first, second *GroupConsumer, stall time.Duration) (zombie *GroupConsumer, owned history.TopicPartition) {
	c.t.Helper()
	first.Start()
	second.Start()
	c.runUntil(30*time.Second, "the group settling", func() bool { return settled(first, second) })
	owned = first.Membership().Assigned[0]
	c.sendAll(producer, owned.Partition, "x", 1)
	c.runUntil(30*time.Second, "the zombie reading", func() bool { return first.Position(owned) == 1 })
	first.Stall(stall)
	c.runUntil(30*time.Second, "the survivor owning both", func() bool { return settled(second) })
	return first, owned
}

func TestCooperativeMemberKeepsReadingWhatItKeepsWhileTheGroupRebalances(t *testing.T) {
	c := newCluster(t, 21, simdisk.Faults{}, withBrokerConfig(groupBroker))
	producer := NewProducer(c.client("p1"), ProducerConfig{Acks: -1}, c.recorder, c.processes)
	first := c.cooperativeConsumer("c1")
	first.Start()
	c.runUntil(30*time.Second, "the first member owning both partitions", func() bool { return settled(first) })
	c.sendAll(producer, 0, "a", 3)
	c.sendAll(producer, 1, "b", 3)
	c.runUntil(30*time.Second, "both partitions committed at 3", func() bool {
		return first.Committed(tp(0)) == 3 && first.Committed(tp(1)) == 3
	})

	second := c.cooperativeConsumer("c2")
	second.Start()
	fetchesJoining := int64(0)
	c.runUntil(30*time.Second, "the group settling over both members", func() bool {
		if first.membership.cooperative.joining {
			fetchesJoining = max(fetchesJoining, first.Stats().Fetches)
		}
		return settled(first, second)
	})
	c.sendAll(producer, 0, "a-late", 2)
	c.sendAll(producer, 1, "b-late", 2)
	c.runUntil(30*time.Second, "both partitions committed at 5", func() bool {
		return groupCommitted(tp(0), first, second) == 5 && groupCommitted(tp(1), first, second) == 5
	})

	ops := c.recorder.History()
	// The first member kept one partition throughout, gave the other up
	// in one generation, and the second member got it in the next.
	firstAssignments, secondAssignments := assignmentsOf(ops, first), assignmentsOf(ops, second)
	kept := first.Membership().Assigned
	moved := tp(1 - kept[0].Partition)
	if len(kept) != 1 || !slices.Equal(secondAssignments[len(secondAssignments)-1], []history.TopicPartition{moved}) {
		t.Fatalf("final assignments %v and %v, want one partition each", firstAssignments, secondAssignments)
	}
	// Alone, then the generation the second member joined (the moved
	// partition withheld from it), then the one that gave it to it.
	if want := [][]history.TopicPartition{{tp(0), tp(1)}, kept, kept}; !slices.EqualFunc(firstAssignments, want, slices.Equal) {
		t.Fatalf("the first member was assigned %v, want %v", firstAssignments, want)
	}
	if want := [][]history.TopicPartition{nil, {moved}}; !slices.EqualFunc(secondAssignments, want, slices.Equal) {
		t.Fatalf("the second member was assigned %v, want %v", secondAssignments, want)
	}
	if first.Stats().PartitionsRevoked != 1 || first.Stats().PartitionsLost != 0 || second.Stats().PartitionsAdded != 1 {
		t.Fatalf("stats %+v and %+v, want one partition revoked from the first and added to the second", first.Stats(), second.Stats())
	}
	if first.Stats().Rebalances != 0 {
		t.Fatalf("the first member gave up everything %d times, want never", first.Stats().Rebalances)
	}
	if fetchesJoining == 0 {
		t.Fatal("the first member fetched nothing while it rejoined")
	}
	// It read the partition it kept from where it was: one committed
	// read, when it first joined.
	if n := first.Stats().FetchCommitted; n != 1 {
		t.Fatalf("the first member read committed offsets %d times, want once", n)
	}
	if values := polledValues(ops, kept[0]); len(values) != 5 || len(slices.Compact(slices.Sorted(slices.Values(values)))) != 5 {
		t.Fatalf("group polled %v from %s, want 5 values, each once", values, kept[0])
	}
	if report := checker.Check(ops, checker.Options{}); !report.Valid {
		t.Fatalf("checker: %s", report)
	}
}

func TestCooperativeMemberDropsWhatItLostWithoutCommitting(t *testing.T) {
	c := newCluster(t, 22, simdisk.Faults{}, withBrokerConfig(groupBroker))
	producer := NewProducer(c.client("p1"), ProducerConfig{Acks: -1}, c.recorder, c.processes)
	first, second := c.cooperativeConsumer("c1"), c.cooperativeConsumer("c2")
	// Frozen past its session, the zombie is expired and its partition
	// moves; when it wakes, the coordinator refuses it, and it must drop
	// the partition rather than commit it.
	zombie, _ := c.stallAZombie(producer, first, second, 3*time.Second)
	c.runUntil(30*time.Second, "the zombie back in the group", func() bool { return settled(first, second) })
	if zombie.Stats().PartitionsLost == 0 {
		t.Fatalf("zombie stats %+v, want its partitions lost", zombie.Stats())
	}
	ops := c.recorder.History()
	if report := checker.Check(ops, checker.Options{}); !report.Valid {
		t.Fatalf("checker: %s", report)
	}
}

func TestGroupUpgradingToCooperativeSettles(t *testing.T) {
	// The first step of Kafka's upgrade to cooperative rebalancing:
	// some members offer cooperative-sticky and an eager assignor, so
	// they rebalance eagerly with the cooperative-sticky assignor;
	// others offer it alone and rebalance cooperatively.
	c := newCluster(t, 23, simdisk.Faults{}, withBrokerConfig(groupBroker))
	producer := NewProducer(c.client("p1"), ProducerConfig{Acks: -1}, c.recorder, c.processes)
	eager := c.groupConsumer("c1", func(config *GroupConsumerConfig) {
		config.Assignors = []string{AssignorCooperativeSticky, AssignorRange}
	})
	cooperative := c.cooperativeConsumer("c2")
	if eager.cooperative() || !cooperative.cooperative() {
		t.Fatal("a consumer offering an eager assignor must rebalance eagerly, one offering cooperative-sticky alone cooperatively")
	}
	eager.Start()
	c.runUntil(30*time.Second, "the eager member owning both", func() bool { return settled(eager) })
	cooperative.Start()
	c.runUntil(30*time.Second, "the group settling", func() bool { return settled(eager, cooperative) })
	eager.Leave()
	c.runUntil(30*time.Second, "the cooperative member owning both", func() bool { return settled(cooperative) })
	c.sendAll(producer, 0, "a", 2)
	c.sendAll(producer, 1, "b", 2)
	c.runUntil(30*time.Second, "both committed", func() bool {
		return cooperative.Committed(tp(0)) == 2 && cooperative.Committed(tp(1)) == 2
	})
	if m := cooperative.Membership(); m.Generation < 3 {
		t.Fatalf("the cooperative member is in generation %d, want past the three rebalances", m.Generation)
	}
	if report := checker.Check(c.recorder.History(), checker.Options{}); !report.Valid {
		t.Fatalf("checker: %s", report)
	}
}

func TestCooperativeZombieCommitIsCaughtWithTheCanary(t *testing.T) {
	// As TestStalledConsumerCommitsWithAStaleGeneration, for members
	// that read on while they rebalance.
	for _, canary := range []bool{false, true} {
		name := "fixed"
		options := []clusterOption{withBrokerConfig(groupBroker)}
		if canary {
			name = "canary"
			options = append(options, withCanaries("group-stale-generation-commit"))
		}
		t.Run(name, func(t *testing.T) {
			c := newCluster(t, 24, simdisk.Faults{}, options...)
			producer := NewProducer(c.client("p1"), ProducerConfig{Acks: -1}, c.recorder, c.processes)
			_, owned := c.stallAZombie(producer, c.cooperativeConsumer("c1"), c.cooperativeConsumer("c2"), 5*time.Second)
			// Something for the zombie to read, and commit, as it wakes.
			c.sendAll(producer, owned.Partition, "y", 1)
			c.run(6 * time.Second)
			report := checker.Check(c.recorder.History(), checker.Options{})
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
