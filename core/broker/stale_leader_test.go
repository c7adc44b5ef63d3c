package broker

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A leader cut off from every other node, but not from its clients, keeps
// believing it leads until it hears otherwise. Once its lease from the
// controller has run out (the controller may have fenced it and elected a
// successor) it answers consumers NOT_LEADER_OR_FOLLOWER instead of
// records: its successor may have deleted them since (DeleteRecords) or
// written past them. Healed, it serves again as the metadata says.
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
