package broker

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"

	"sluice/core/metadata"
	"sluice/core/quorum"
)

// TestRequestsNoNodeSendsAreAnsweredWithoutHarm is
// TestRequestsNoClientSendsAreAnsweredWithoutHarm on the controller
// listener, with the APIs only nodes send one another (the quorum's,
// BrokerRegistration, BrokerHeartbeat, AlterPartition,
// AllocateProducerIds) and Fetch, which there may name the metadata log.
// The listener is meant for the cluster's own nodes, as Kafka's is, but a
// misconfigured client, a node of another cluster or a stale one reaches
// it too; what any of them sends must be answered, and must neither
// crash the node nor cost it a record. A forged vote or leader may cost
// the quorum an election; the node, its only voter, must win one again
// and go on taking records. Only a request that speaks for the node
// itself, a BrokerRegistration or BrokerHeartbeat with its id, may stop
// it serving records, as it would in Kafka: one asking for a controlled
// shutdown moves the node's leaderships away, with nowhere to go. Such a
// case is held to the rest (every request answered, nothing panics or
// halts).
func TestRequestsNoNodeSendsAreAnsweredWithoutHarm(t *testing.T) {
	keys := nodeToNodeKeys()
	rapid.Check(t, func(rt *rapid.T) {
		node := newTestNode(t, DefaultConfig())
		setup := node.connect()
		topicID := setup.createTopic(hostileTopic, hostilePartitions).TopicID
		setup.createTopic(keptTopic, 1)
		kept := []string{"before-1", "before-2"}
		setup.produce(keptTopic, 0, kept...)

		f := nodeToNodeFiller(rt, topicID, node)
		sent := sendHostileRequests(rt, node, f, keys, true)
		node.run(settleTime)

		node.checkAlive()
		if impersonates(sent, node.config.NodeID) {
			return
		}
		after := node.connect()
		if _, code := after.tryProduce(keptTopic, 0, "after"); code != 0 {
			rt.Fatalf("producing to %s after %s: error %d", keptTopic, describeRequests(sent), code)
		}
		kept = append(kept, "after")
		got, code, _ := after.fetchAll(keptTopic, 0, 0)
		if code != 0 || !slices.Equal(got, kept) {
			rt.Fatalf("%s after %s: fetched %q (error %d), want %q", keptTopic, describeRequests(sent), got, code, kept)
		}
	})
}

// nodeToNodeKeys are the APIs only the controller listener serves, and
// Fetch, in key order.
func nodeToNodeKeys() []int16 {
	keys := []int16{1}
	for _, a := range apis {
		if a != nil && a.nodeToNode {
			keys = append(keys, a.key)
		}
	}
	slices.Sort(keys)
	return keys
}

// impersonates reports whether requests hold one that speaks for one of
// the brokers ids as only that broker should: its registration, its
// heartbeat, or, for a partition it leads, an ISR change.
func impersonates(requests []kmsg.Request, ids ...int32) bool {
	for _, req := range requests {
		id := int32(-1)
		switch req := req.(type) {
		case *kmsg.BrokerRegistrationRequest:
			id = req.BrokerID
		case *kmsg.BrokerHeartbeatRequest:
			id = req.BrokerID
		case *kmsg.AlterPartitionRequest:
			id = req.BrokerID
		}
		if slices.Contains(ids, id) {
			return true
		}
	}
	return false
}

// nodeToNodeFiller fills requests with what a node would send as often as
// a client's: the metadata log's name and id, the cluster's id, node ids
// (the nodes', and one no node has), epochs and offsets near the quorum's,
// and the nodes' broker epochs.
func nodeToNodeFiller(rt *rapid.T, topicID [16]byte, nodes ...*testNode) *hostileFiller {
	node := nodes[0]
	var ids, brokerEpochs []int64
	for _, n := range nodes {
		ids = append(ids, int64(n.config.NodeID))
		brokerEpochs = append(brokerEpochs, n.broker.brokerEpoch)
	}
	ids = append(ids, int64(slices.Max(ids))+1)
	_, epoch, _ := node.broker.quorum.Leader()
	epochs := []int64{0, int64(epoch) - 1, int64(epoch), int64(epoch) + 1, int64(epoch) + 2}
	offsets := []int64{0, 1, 5}
	return &hostileFiller{
		rt:         rt,
		topicIDs:   [][16]byte{topicID, quorum.MetadataTopicID},
		batch:      hostileBatch(node),
		oneElement: true,
		strings: map[string][]string{
			"Topic":     {quorum.MetadataTopic, hostileTopic},
			"ClusterID": {node.broker.ClusterID()},
		},
		integers: map[string][]int64{
			"VoterID": ids, "CandidateID": ids, "LeaderID": ids, "ReplicaID": ids, "BrokerID": ids, "PreferredSuccessors": ids,
			"CandidateEpoch": epochs, "LeaderEpoch": epochs, "LastOffsetEpoch": epochs, "CurrentLeaderEpoch": epochs, "PartitionEpoch": epochs, "LastFetchedEpoch": epochs,
			"LastOffset": offsets, "FetchOffset": offsets, "Position": offsets,
			"BrokerEpoch": brokerEpochs,
			"Partition":   {0},
		},
	}
}

// TestRequestsNoNodeSendsLeaveAQuorumOfThreeWhole is
// TestRequestsNoNodeSendsAreAnsweredWithoutHarm against one node of three,
// each a voter: forged votes, leader announcements and resignations now
// reach the quorum's rules (another voter may lead, an epoch may move).
// They may cost the quorum an election, never a halt, an acknowledged
// record, or for long the cluster's taking records: within
// hostileRecoveryMax of the requests, a replicated topic takes a write
// again, on top of everything it held.
func TestRequestsNoNodeSendsLeaveAQuorumOfThreeWhole(t *testing.T) {
	keys := nodeToNodeKeys()
	rapid.Check(t, func(rt *rapid.T) {
		c := newTestCluster(t, 3, 1)
		c.client(c.controllerLeader()).createTopicWithConfigs(keptTopic, 1, 3, metadata.ConfigMinInsyncReplicas, "2")
		leader := c.awaitPartitionLeader(keptTopic, 0, -1)
		kept := []string{"0:before-1", "1:before-2"}
		c.client(leader).produce(keptTopic, 0, "before-1", "before-2")
		topicID := c.nodes[leader].broker.image.Topics[keptTopic].ID

		target := c.nodes[rapid.SampledFrom(c.ids).Draw(rt, "target")]
		nodes := []*testNode{target}
		for _, id := range c.ids {
			if c.nodes[id] != target {
				nodes = append(nodes, c.nodes[id])
			}
		}
		sent := sendHostileRequests(rt, target, nodeToNodeFiller(rt, [16]byte(topicID), nodes...), keys, true)
		c.run(time.Second)
		for _, id := range c.ids {
			if err := c.nodes[id].halted; err != nil {
				rt.Fatalf("node %d halted after %s: %v", id, describeRequests(sent), err)
			}
		}
		if impersonates(sent, c.ids...) {
			return
		}
		acknowledged := ""
		for waited := time.Duration(0); acknowledged == "" && waited < hostileRecoveryMax; waited += time.Second {
			if leader := c.someLeader(keptTopic, 0); leader >= 0 {
				value := fmt.Sprintf("after-%d", waited/time.Second)
				if offset, ok := c.tryProduceFor(leader, keptTopic, value); ok {
					acknowledged = fmt.Sprintf("%d:%s", offset, value)
					break
				}
			}
			c.run(time.Second)
		}
		if acknowledged == "" {
			rt.Fatalf("no write taken within %v of %s", hostileRecoveryMax, describeRequests(sent))
		}
		held := c.logValues(c.someLeader(keptTopic, 0), keptTopic, 0)
		if len(held) < len(kept) || !slices.Equal(held[:len(kept)], kept) || !slices.Contains(held, acknowledged) {
			rt.Fatalf("after %s the leader holds %q, want %q first and %q", describeRequests(sent), held, kept, acknowledged)
		}
	})
}

// hostileRecoveryMax bounds how long a forged election may keep a cluster
// of three from taking writes: a few election and session timeouts.
const hostileRecoveryMax = 30 * time.Second
