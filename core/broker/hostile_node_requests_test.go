package broker

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"

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

		f := nodeToNodeFiller(rt, node, topicID)
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
	for key, a := range apis {
		if a.nodeToNode {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys
}

// impersonates reports whether requests hold one that speaks for broker
// id as only that broker should: its registration or heartbeat.
func impersonates(requests []kmsg.Request, id int32) bool {
	for _, req := range requests {
		switch req := req.(type) {
		case *kmsg.BrokerRegistrationRequest:
			if req.BrokerID == id {
				return true
			}
		case *kmsg.BrokerHeartbeatRequest:
			if req.BrokerID == id {
				return true
			}
		}
	}
	return false
}

// nodeToNodeFiller fills requests with what a node would send as often as
// a client's: the metadata log's name and id, the cluster's id, node ids
// (the node's own, 1, and one no node has), epochs and offsets near the
// quorum's, and the node's broker epoch.
func nodeToNodeFiller(rt *rapid.T, node *testNode, topicID [16]byte) *hostileFiller {
	ids := []int64{int64(node.config.NodeID), int64(node.config.NodeID) + 1}
	epochs := []int64{0, 1, 2, 3}
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
			"BrokerEpoch": {node.broker.brokerEpoch},
			"Partition":   {0},
		},
	}
}
