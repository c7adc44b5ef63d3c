package simclient

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/jepsen/history"
	"sluice/sim/simdisk"
)

// An operator adds a partition to a topic a settled group reads. Nothing
// in the group protocol says so: the leader must notice on its metadata
// watch, rejoin, and hand the new partition out, so that what is written
// there is consumed and committed.
func TestGroupLeaderRebalancesWhenTheTopicGainsPartitions(t *testing.T) {
	c := newCluster(t, 13, simdisk.Faults{}, withBrokerConfig(groupBroker))
	producer := NewProducer(c.client("p1"), ProducerConfig{Acks: -1}, c.recorder, c.processes)
	watch := func(config *GroupConsumerConfig) { config.MetadataMaxAge = 500 * time.Millisecond }
	first, second := c.groupConsumer("c1", watch), c.groupConsumer("c2", watch)
	first.Start()
	second.Start()
	c.runUntil(30*time.Second, "the group settling", func() bool { return settled(first, second) })
	c.sendAll(producer, 0, "a", 3)
	generation := first.Membership().Generation

	c.growTopic(testPartitions + 1)
	c.sendAll(producer, testPartitions, "c", 4)
	grown := tp(testPartitions)
	c.runUntil(30*time.Second, "the new partition committed at 4", func() bool { return groupCommitted(grown, first, second) == 4 })

	var owned []history.TopicPartition
	for _, g := range []*GroupConsumer{first, second} {
		m := g.Membership()
		if m.Generation <= generation {
			t.Fatalf("%+v still in generation %d, want a rebalance after the growth", m, generation)
		}
		owned = append(owned, m.Assigned...)
	}
	slices.SortFunc(owned, history.TopicPartition.Compare)
	if want := []history.TopicPartition{tp(0), tp(1), tp(2)}; !slices.Equal(owned, want) {
		t.Fatalf("the group owns %v, want %v", owned, want)
	}
	if grew := first.Stats().PartitionsGrown + second.Stats().PartitionsGrown; grew != 1 {
		t.Fatalf("the leader asked for %d rebalances on growth, want 1", grew)
	}
	if values := polledValues(c.recorder.History(), grown); !slices.Equal(values, []string{"c-0", "c-1", "c-2", "c-3"}) {
		t.Fatalf("group polled %v from the new partition, want c-0..c-3 in order", values)
	}
}

// growTopic raises the test topic to count partitions with
// CreatePartitions, as an operator would.
func (c *cluster) growTopic(count int32) {
	c.t.Helper()
	req := kmsg.NewPtrCreatePartitionsRequest()
	topic := kmsg.NewCreatePartitionsRequestTopic()
	topic.Topic, topic.Count = testTopic, count
	req.Topics = append(req.Topics, topic)
	req.TimeoutMillis = 5000
	created := false
	c.client("admin").RequestAny(req, func(resp kmsg.Response, err error) {
		if err != nil || resp.(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode != 0 {
			c.t.Errorf("CreatePartitions: %v %+v", err, resp)
		}
		created = true
	})
	c.runUntil(10*time.Second, "the partition created", func() bool { return created })
}

// A static leader's process restarts and rejoins the stable group: no
// rebalance, and it is told to lead but skip the assignment (JoinGroup v9,
// KIP-814). It must still notice the topic grow: it learns what the
// standing assignment covers from the coordinator, then watches.
func TestReturningStaticLeaderStillNoticesNewPartitions(t *testing.T) {
	c := newCluster(t, 14, simdisk.Faults{}, withBrokerConfig(groupBroker))
	producer := NewProducer(c.client("p1"), ProducerConfig{Acks: -1}, c.recorder, c.processes)
	static := func(instance string) func(*GroupConsumerConfig) {
		return func(config *GroupConsumerConfig) {
			config.InstanceID, config.MetadataMaxAge = instance, 500*time.Millisecond
		}
	}
	first, second := c.groupConsumer("c1", static("static-1")), c.groupConsumer("c2", static("static-2"))
	first.Start()
	second.Start()
	c.runUntil(30*time.Second, "the group settling", func() bool { return settled(first, second) })
	leader, other := first, second
	if second.membership.leadPartitions > 0 {
		leader, other = second, first
	}
	before := leader.Membership()
	leader.client.Crash()
	leader.client.Restart()
	c.runUntil(30*time.Second, "the static leader back", func() bool { return settled(first, second) })
	if after := leader.Membership(); after.Generation != before.Generation || !slices.Equal(after.Assigned, before.Assigned) {
		t.Fatalf("the static leader came back as %+v, was %+v: want the same generation and partitions", after, before)
	}
	if leader.membership.leadPartitions != coverageUnknown || other.membership.leadPartitions != 0 {
		t.Fatalf("after the restart leadPartitions are %d (leader) and %d, want the leader to lead with its coverage unknown",
			leader.membership.leadPartitions, other.membership.leadPartitions)
	}

	c.growTopic(testPartitions + 1)
	c.sendAll(producer, testPartitions, "c", 3)
	grown := tp(testPartitions)
	c.runUntil(30*time.Second, "the new partition committed at 3", func() bool { return groupCommitted(grown, first, second) == 3 })
	if after := leader.Membership(); after.Generation <= before.Generation {
		t.Fatalf("leader in generation %d, want a rebalance after the growth", after.Generation)
	}
	if grew := leader.Stats().PartitionsGrown; grew != 1 {
		t.Fatalf("the leader asked for %d rebalances on growth, want 1", grew)
	}
}

func TestALeaderThatComputedTwoCoveragesForOneGenerationAsks(t *testing.T) {
	g := &GroupConsumer{}
	for _, step := range []struct {
		generation, covered, want int32
	}{
		{3, 4, 4},
		{3, 4, 4},               // the same again: whichever stands covers 4
		{3, 5, coverageUnknown}, // the coordinator kept one of two
		{3, 5, coverageUnknown}, // and still may have kept the first
		{4, 5, 5},               // a new generation starts afresh
	} {
		if got := g.leadCoverage(step.generation, step.covered); got != step.want {
			t.Fatalf("generation %d covering %d: leadPartitions %d, want %d", step.generation, step.covered, got, step.want)
		}
	}
}
