package broker

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// listLatest asks for a partition's latest offset (ListOffsets -1).
func listLatest(c *testClient, topic string, partition int32) (int64, int16) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 7
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = partition, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	answer := c.request(req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
	return answer.Offset, answer.ErrorCode
}

// A leader cut off from every other node, but not from its clients, keeps
// believing it leads until it hears otherwise. Once its lease from the
// controller has run out (the controller may have fenced it and elected a
// successor) it answers consumers NOT_LEADER_OR_FOLLOWER instead of
// records, and instead of the ends it knows (ListOffsets): its successor
// may have deleted them since (DeleteRecords) or written past them.
// Healed, it serves again as the metadata says.
func TestClusterStrandedLeaderStopsServingConsumers(t *testing.T) {
	c := newTestCluster(t, 3, 21)
	stranded := c.someNonController()
	client := c.client(stranded)
	client.createTopicRF("s", 1, 3)
	c.runUntil("the topic is led", clusterConvergeMax, func() bool {
		p, open := c.nodes[stranded].broker.partitions[partitionKey{topic: "s"}]
		return open && p.LeaderEpoch() >= 0
	})
	leader := c.nodes[stranded].broker.image.Topics["s"].Partitions[0].Leader
	if leader != stranded {
		// Make the stranded node the leader's: strand whoever leads.
		stranded = leader
		client = c.client(stranded)
	}
	if _, code := client.tryProduce("s", 0, "a", "b"); code != 0 {
		t.Fatalf("produce: %v", kerr.ErrorForCode(code))
	}
	if values, code, _ := client.fetch("s", 0, 0); code != 0 || !slices.Equal(values, []string{"a", "b"}) {
		t.Fatalf("fetch from the leader before the fault: %v, %v", values, kerr.ErrorForCode(code))
	}

	var others []string
	for _, id := range c.ids {
		if id != stranded {
			others = append(others, clusterHost(id))
		}
	}
	c.network.Partition([]string{clusterHost(stranded)}, others)
	c.run(2 * DefaultConfig().SessionTimeout)
	p := c.nodes[stranded].broker.partitions[partitionKey{topic: "s"}]
	if !p.IsLeader() {
		t.Fatal("the stranded node learned it was replaced: the test does not test a stale leader")
	}
	if values, code, _ := client.fetch("s", 0, 0); code != kerr.NotLeaderForPartition.Code || len(values) != 0 {
		t.Fatalf("a stale leader without a lease answered a consumer %v with %v, want NOT_LEADER_OR_FOLLOWER", values, kerr.ErrorForCode(code))
	}
	if offset, code := listLatest(client, "s", 0); code != kerr.NotLeaderForPartition.Code {
		t.Fatalf("a stale leader without a lease answered ListOffsets latest %d with %v, want NOT_LEADER_OR_FOLLOWER", offset, kerr.ErrorForCode(code))
	}

	c.network.Heal()
	c.awaitBrokers(c.ids...)
	c.runUntil("the current leader serves the records", clusterConvergeMax, func() bool {
		current := c.nodes[c.controllerLeader()].broker.image.Topics["s"].Partitions[0].Leader
		if current < 0 {
			return false
		}
		values, code, _ := c.client(current).fetch("s", 0, 0)
		return code == 0 && slices.Equal(values, []string{"a", "b"})
	})
}
