package broker

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestClusterRestartedNodeWaitsForACaughtUpImage restarts a node whose
// newest metadata snapshot names partitions it hosts, with the node cut
// off from the other voters: its image at start is only that snapshot,
// possibly older than what the node saw before it stopped, so it must
// neither open nor follow nor lead any partition until its quorum has
// caught up with the metadata log. Healed, it catches up and takes up
// every partition as the current image says.
func TestClusterRestartedNodeWaitsForACaughtUpImage(t *testing.T) {
	const snapshotEvery = 10
	c := newTestCluster(t, 3, 11, func(config *Config) { config.SnapshotEveryRecords = snapshotEvery })
	leader := c.controllerLeader()
	lagging := c.someNonController()
	client := c.client(leader)
	for i := range 4 {
		client.createTopicRF(fmt.Sprintf("t%d", i), 2, 3)
	}
	c.runUntil("the lagging node snapshots a metadata image naming its partitions", clusterConvergeMax, func() bool {
		took := strings.Contains(c.log.String(), " "+clusterHost(lagging)+" INFO took snapshot")
		return took && len(c.nodes[lagging].broker.partitions) == 8
	})
	c.crash(lagging)
	var others []string
	for _, id := range c.ids {
		if id != lagging {
			others = append(others, clusterHost(id))
		}
	}
	c.network.Partition([]string{clusterHost(lagging)}, others)
	c.restart(lagging)
	restarted := c.nodes[lagging].broker
	if len(restarted.image.Topics) == 0 {
		t.Fatal("the restarted node's image is empty: no snapshot was restored, so the test does not test what it says")
	}
	c.run(5 * time.Second)
	if restarted.quorum.CaughtUp() {
		t.Fatal("a node cut off from every other voter caught up")
	}
	if open := len(restarted.partitions); open != 0 {
		t.Fatalf("the restarted node opened %d partitions from a metadata image that has not caught up", open)
	}

	c.network.Heal()
	c.awaitBrokers(c.ids...)
	current := c.nodes[leader].broker.image
	c.runUntil("the restarted node takes up its partitions as the current image says", clusterConvergeMax, func() bool {
		for name, topic := range current.Topics {
			for _, mp := range topic.Partitions {
				p, open := restarted.partitions[partitionKey{topic: name, partition: mp.Index}]
				if !open || p.LeaderEpoch() != mp.LeaderEpoch {
					return false
				}
			}
		}
		return true
	})
}
