package broker

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
	"sluice/core/metadata"
	"sluice/sim/kernel"
)

// A small randomized check of the replication promise, ahead of the
// simulator's workloads: a client produces acks=all to whichever node leads
// while nodes lose power and are cut off, at random from the seed; at the
// end the faults heal and every acknowledged write must be in the log, at
// the offset it was acknowledged with, on every replica.

const (
	faultSeeds = 10
	faultSteps = 60
	// faultProduceWaitMax bounds the wait for one produce's answer; an
	// unanswered produce's outcome is unknown (it may or may not be in the
	// log later, and either is fine).
	faultProduceWaitMax = 5 * time.Second
)

func TestClusterReplicationUnderCrashesAndPartitions(t *testing.T) {
	for seed := uint64(1); seed <= faultSeeds; seed++ {
		t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) { runReplicationFaults(t, seed) })
	}
}

func runReplicationFaults(t *testing.T, seed uint64) {
	c := newTestCluster(t, 3, 100+seed, func(config *Config) {
		config.SessionTimeout = 3 * time.Second
		config.HeartbeatInterval = 500 * time.Millisecond
		config.ReplicaLagTimeMax = 2 * time.Second
	})
	c.client(c.controllerLeader()).createTopicWithConfigs("orders", 1, 3, metadata.ConfigMinInsyncReplicas, "2")
	c.awaitPartitionLeader("orders", 0, -1)
	random := kernel.NewRand(seed, "replication-faults")
	acknowledged := map[int64]string{} // offset → value
	next := 0
	for range faultSteps {
		switch roll := random.IntN(10); {
		case roll < 6:
			leader := c.someLeader("orders", 0)
			if leader < 0 {
				c.run(500 * time.Millisecond)
				continue
			}
			value := fmt.Sprintf("v%d", next)
			next++
			if offset, ok := c.tryProduceFor(leader, "orders", value); ok {
				if other, taken := acknowledged[offset]; taken {
					t.Fatalf("offset %d acknowledged twice: %s and %s", offset, other, value)
				}
				acknowledged[offset] = value
			}
		case roll < 8:
			switch live := c.live(); {
			case len(live) == len(c.ids) || len(live) > 0 && random.IntN(3) == 0:
				c.crash(live[random.IntN(len(live))])
			case random.IntN(4) == 0:
				// Power loss of every machine at once.
				for _, id := range live {
					c.crash(id)
				}
				c.restartAllCrashed()
			default:
				c.restartAllCrashed()
			}
		default:
			if random.IntN(2) == 0 {
				c.network.Heal()
				continue
			}
			cut := c.ids[random.IntN(len(c.ids))]
			var others []string
			for _, id := range c.ids {
				if id != cut {
					others = append(others, clusterHost(id))
				}
			}
			c.network.Partition([]string{clusterHost(cut)}, others)
		}
		c.run(time.Duration(random.IntN(1000)) * time.Millisecond)
	}

	// Heal everything, and wait for every replica to hold one log.
	c.network.Heal()
	c.restartAllCrashed()
	c.awaitBrokers(c.ids...)
	leader := c.awaitPartitionLeader("orders", 0, -1)
	c.runUntil("every replica back in the ISR", failoverWaitMax, func() bool {
		return len(c.partitionState(leader, "orders", 0).ISR) == 3
	})
	var final []string
	c.runUntil("every replica holds the leader's log", failoverWaitMax, func() bool {
		final = c.logValues(leader, "orders", 0)
		for _, id := range c.ids {
			if !slices.Equal(c.logValues(id, "orders", 0), final) {
				return false
			}
		}
		return true
	})
	held := map[int64]string{}
	for _, entry := range final {
		var offset int64
		var value string
		fmt.Sscanf(entry, "%d:%s", &offset, &value)
		held[offset] = value
	}
	for offset, value := range acknowledged {
		if held[offset] != value {
			t.Fatalf("acknowledged %s at offset %d; the log holds %q there (log %v)", value, offset, held[offset], final)
		}
	}
	t.Logf("%d writes acknowledged of %d sent; the log holds %d records", len(acknowledged), next, len(final))
}

// someLeader is the partition's leader in a live node's image, if that
// leader is live and serves; -1 otherwise.
func (c *testCluster) someLeader(topic string, partition int32) int32 {
	for _, id := range c.live() {
		p, ok := c.nodes[id].broker.image.Partition(topic, partition)
		if !ok || p.Leader < 0 || c.nodes[p.Leader].broker == nil {
			continue
		}
		return p.Leader
	}
	return -1
}

// tryProduceFor sends one acks=all produce to node and reports the offset
// it was acknowledged at, or false when it was refused or got no answer in
// time (its outcome unknown).
func (c *testCluster) tryProduceFor(node int32, topic, value string) (int64, bool) {
	client := c.client(node)
	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	req.Acks = -1
	req.TimeoutMillis = int32(faultProduceWaitMax / time.Millisecond)
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batchOf(c.nodes[node].machine.Clock.Now().UnixMilli(), value)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	pending := client.send(req)
	c.kernel.RunWhile(c.kernel.Now()+int64(faultProduceWaitMax+time.Second), func() bool {
		return !pending.answered() && c.nodes[node].broker != nil
	})
	if !pending.answered() || c.nodes[node].broker == nil {
		return -1, false
	}
	answer := pending.await().(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	return answer.BaseOffset, answer.ErrorCode == 0
}

// restartAllCrashed restarts every node whose process is down.
func (c *testCluster) restartAllCrashed() {
	for _, id := range c.ids {
		if c.nodes[id].broker == nil {
			c.restart(id)
		}
	}
}

// batchOf is one batch of one record.
func batchOf(timestampMs int64, value string) []byte {
	return batch.Build(batch.Spec{BaseTimestamp: timestampMs, ProducerID: batch.NoProducerID, Records: []batch.Record{{Value: []byte(value)}}})
}
