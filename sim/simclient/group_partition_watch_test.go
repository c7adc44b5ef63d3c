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

	admin := c.client("admin")
	req := kmsg.NewPtrCreatePartitionsRequest()
	topic := kmsg.NewCreatePartitionsRequestTopic()
	topic.Topic, topic.Count = testTopic, testPartitions+1
	req.Topics = append(req.Topics, topic)
	req.TimeoutMillis = 5000
	created := false
	admin.RequestAny(req, func(resp kmsg.Response, err error) {
		if err != nil || resp.(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode != 0 {
			t.Errorf("CreatePartitions: %v %+v", err, resp)
		}
		created = true
	})
	c.runUntil(10*time.Second, "the partition created", func() bool { return created })
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
