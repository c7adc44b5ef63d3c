package broker

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
	"sluice/core/metadata"
)

// These tests run partition replication across three real Brokers on
// simulated machines (see cluster_test.go for the cluster harness): a
// client produces acks=all to the leader, the leader's machine loses power,
// and the new leader must serve every acknowledged record.

// failoverWaitMax bounds, in virtual time, how long a failover may take: the
// controller fences the dead broker after its session timeout and elects
// another leader; the new leader's high watermark then catches up.
const failoverWaitMax = 60 * time.Second

// createTopicWithConfigs creates a topic with an explicit replication
// factor and topic configs (name, value pairs).
func (cl *testClient) createTopicWithConfigs(name string, partitions int32, replicationFactor int16, configs ...string) {
	cl.node.t.Helper()
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	req.TimeoutMillis = 30_000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, partitions, replicationFactor
	for i := 0; i+1 < len(configs); i += 2 {
		config := kmsg.NewCreateTopicsRequestTopicConfig()
		value := configs[i+1]
		config.Name, config.Value = configs[i], &value
		t.Configs = append(t.Configs, config)
	}
	req.Topics = append(req.Topics, t)
	resp := cl.request(req).(*kmsg.CreateTopicsResponse)
	requireNoError(cl.node.t, "creating "+name, resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage)
}

// produceAcks appends values as one batch with the given acks and returns
// the base offset and error code.
func (cl *testClient) produceAcks(topic string, partition int32, acks int16, values ...string) (int64, int16) {
	cl.node.t.Helper()
	spec := batch.Spec{BaseTimestamp: cl.node.machine.Clock.Now().UnixMilli(), ProducerID: batch.NoProducerID}
	for _, v := range values {
		spec.Records = append(spec.Records, batch.Record{Value: []byte(v)})
	}
	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	req.Acks = acks
	req.TimeoutMillis = 30_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = batch.Build(spec)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	answer := cl.request(req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	return answer.BaseOffset, answer.ErrorCode
}

// partitionState is a partition's state in a node's image.
func (c *testCluster) partitionState(observer int32, topic string, partition int32) *metadata.Partition {
	p, ok := c.nodes[observer].broker.image.Partition(topic, partition)
	if !ok {
		c.t.Fatalf("node %d has no %s-%d", observer, topic, partition)
	}
	return p
}

// awaitPartitionLeader waits until every live node's image names the same
// leader for the partition, other than not, and that node serves as its
// leader; it returns the leader.
func (c *testCluster) awaitPartitionLeader(topic string, partition int32, not int32) int32 {
	c.t.Helper()
	leader := int32(-1)
	c.runUntil(fmt.Sprintf("%s-%d led by a node other than %d", topic, partition, not), failoverWaitMax, func() bool {
		leader = -1
		for _, id := range c.live() {
			p, ok := c.nodes[id].broker.image.Partition(topic, partition)
			if !ok || p.Leader < 0 || p.Leader == not || (leader >= 0 && p.Leader != leader) {
				return false
			}
			leader = p.Leader
		}
		if leader < 0 || c.nodes[leader].broker == nil {
			return false
		}
		replica, open := c.nodes[leader].broker.partitions[partitionKey{topic: topic, partition: partition}]
		return open && replica.IsLeader()
	})
	return leader
}

// logValues reads a node's whole replica of a partition, committed or not,
// as "offset:value" strings.
func (c *testCluster) logValues(id int32, topic string, partition int32) []string {
	c.t.Helper()
	p := c.nodes[id].broker.partitions[partitionKey{topic: topic, partition: partition}]
	var values []string
	offset := p.LogStartOffset()
	for offset < p.LogEndOffset() {
		chunk, err := p.ReadLog(offset, 1<<20)
		if err != nil {
			c.t.Fatalf("reading node %d's %s-%d at %d: %v", id, topic, partition, offset, err)
		}
		s := batch.Scanner{Buf: chunk}
		for s.Next() {
			h := s.Header()
			records, err := batch.Records(s.Batch())
			if err != nil {
				c.t.Fatal(err)
			}
			for _, r := range records {
				values = append(values, strconv.FormatInt(h.BaseOffset+int64(r.OffsetDelta), 10)+":"+string(r.Value))
			}
			offset = h.NextOffset()
		}
	}
	return values
}

func TestClusterFailoverKeepsEveryAcknowledgedWrite(t *testing.T) {
	c := newTestCluster(t, 3, 21)
	c.client(c.controllerLeader()).createTopicWithConfigs("orders", 1, 3, metadata.ConfigMinInsyncReplicas, "2")
	leader := c.awaitPartitionLeader("orders", 0, -1)
	client := c.client(leader)
	var acknowledged []string
	for i := range 30 {
		value := fmt.Sprintf("v%d", i)
		offset, code := client.tryProduce("orders", 0, value)
		requireNoError(t, "producing "+value, code, nil)
		if offset != int64(i) {
			t.Fatalf("%s at offset %d", value, offset)
		}
		acknowledged = append(acknowledged, fmt.Sprintf("%d:%s", i, value))
	}

	// The leader is cut off from the others and takes one more write,
	// acks=1, that nobody replicates; then its machine loses power.
	var others []string
	var survivors []int32
	for _, id := range c.ids {
		if id != leader {
			others = append(others, clusterHost(id))
			survivors = append(survivors, id)
		}
	}
	c.network.Partition([]string{clusterHost(leader)}, others)
	if _, code := client.produceAcks("orders", 0, 1, "unreplicated"); code != 0 {
		t.Fatalf("acks=1 write on the isolated leader: %v", kerr.ErrorForCode(code))
	}
	c.run(100 * time.Millisecond) // its own sync completes
	c.crash(leader)

	next := c.awaitPartitionLeader("orders", 0, leader)
	if held := c.logValues(next, "orders", 0); !slices.Equal(held, acknowledged) {
		t.Fatalf("the new leader's log holds %v, want every acknowledged write %v", held, acknowledged)
	}
	// Consumers see them all once the new leader's high watermark has
	// caught up (its ISR fetched in the new epoch).
	var read []string
	c.runUntil("the new leader serves every acknowledged write", failoverWaitMax, func() bool {
		got, code, _ := c.client(next).fetchAll("orders", 0, 0)
		requireNoError(t, "reading from the new leader", code, nil)
		read = read[:0]
		for i, v := range got {
			read = append(read, fmt.Sprintf("%d:%s", i, v))
		}
		return slices.Equal(read, acknowledged)
	})
	// The survivors take more acks=all writes in the new epoch.
	for i := 30; i < 40; i++ {
		value := fmt.Sprintf("v%d", i)
		offset, code := c.client(next).tryProduce("orders", 0, value)
		requireNoError(t, "producing "+value+" to the new leader", code, nil)
		acknowledged = append(acknowledged, fmt.Sprintf("%d:%s", offset, value))
	}

	// The old leader comes back: it cuts its unreplicated write,
	// replicates the new epoch, and rejoins the ISR.
	c.network.Heal()
	c.restart(leader)
	c.awaitBrokers(leader)
	took := c.runUntil("the old leader back in the ISR", failoverWaitMax, func() bool {
		return slices.Contains(c.partitionState(next, "orders", 0).ISR, leader)
	})
	t.Logf("the old leader rejoined the ISR %v after its restart", took)
	c.runUntil("every replica holds the same log", failoverWaitMax, func() bool {
		return slices.Equal(c.logValues(leader, "orders", 0), acknowledged) &&
			slices.Equal(c.logValues(survivors[0], "orders", 0), acknowledged) &&
			slices.Equal(c.logValues(survivors[1], "orders", 0), acknowledged)
	})
	if p := c.partitionState(next, "orders", 0); p.LeaderEpoch < 1 || len(p.ISR) != 3 {
		t.Fatalf("partition state after the failover: %+v", p)
	}
	if !strings.Contains(c.log.String(), " "+clusterHost(leader)+" INFO truncating ") {
		t.Fatal("the old leader did not log cutting its unreplicated write: the test does not test what it says")
	}
}

func TestClusterCommittedOffsetsSurviveTheCoordinatorsNode(t *testing.T) {
	c := newTestCluster(t, 3, 22, func(config *Config) { config.OffsetsTopicPartitions = 3 })
	admin := c.client(c.controllerLeader())
	admin.createTopicRF("orders", 2, 3)

	coordinator := c.awaitCoordinator("app", -1)
	if rf := len(c.partitionState(coordinator, metadata.ConsumerOffsetsTopic, 0).Replicas); rf != 3 {
		t.Fatalf("__consumer_offsets has %d replicas, want 3", rf)
	}
	commits := map[int32]int64{0: 17, 1: 4}
	c.commitOffsets(coordinator, "app", "orders", commits)

	c.crash(coordinator)
	next := c.awaitCoordinator("app", coordinator)
	if got := c.committedOffsets(next, "app", "orders", 0, 1); !slices.Equal(got, []int64{17, 4}) {
		t.Fatalf("committed offsets after the coordinator's node was lost: %v, want [17 4]", got)
	}
}

// awaitCoordinator asks live nodes for a group's coordinator until one
// that is not `not` answers and serves it; it returns the coordinator.
func (c *testCluster) awaitCoordinator(group string, not int32) int32 {
	c.t.Helper()
	coordinator := int32(-1)
	c.runUntil("a coordinator for "+group, failoverWaitMax, func() bool {
		for _, id := range c.live() {
			answer := c.client(id).findCoordinator(0, group)[0]
			if answer.ErrorCode == 0 && answer.NodeID != not && c.nodes[answer.NodeID].broker != nil {
				coordinator = answer.NodeID
				return true
			}
		}
		return false
	})
	return coordinator
}

// commitOffsets commits offsets for a group with no members (a "simple"
// commit, generation -1), retrying while the coordinator loads.
func (c *testCluster) commitOffsets(coordinator int32, group, topic string, offsets map[int32]int64) {
	c.t.Helper()
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = 8
	req.Group, req.Generation = group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic = topic
	for _, partition := range []int32{0, 1} {
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = partition, offsets[partition], -1
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = append(req.Topics, rt)
	client := c.client(coordinator)
	c.runUntil("offsets committed", failoverWaitMax, func() bool {
		resp := client.request(req).(*kmsg.OffsetCommitResponse)
		for _, p := range resp.Topics[0].Partitions {
			if retriableForGroups(p.ErrorCode) {
				return false
			}
			requireNoError(c.t, "offset commit", p.ErrorCode, nil)
		}
		return true
	})
}

// committedOffsets fetches a group's committed offsets from a node,
// retrying while the coordinator loads.
func (c *testCluster) committedOffsets(coordinator int32, group, topic string, partitions ...int32) []int64 {
	c.t.Helper()
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 8
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = group
	rt := kmsg.NewOffsetFetchRequestGroupTopic()
	rt.Topic, rt.Partitions = topic, partitions
	rg.Topics = append(rg.Topics, rt)
	req.Groups = append(req.Groups, rg)
	client := c.client(coordinator)
	var offsets []int64
	c.runUntil("offsets fetched", failoverWaitMax, func() bool {
		resp := client.request(req).(*kmsg.OffsetFetchResponse).Groups[0]
		if retriableForGroups(resp.ErrorCode) {
			return false
		}
		requireNoError(c.t, "offset fetch", resp.ErrorCode, nil)
		offsets = nil
		for _, p := range resp.Topics[0].Partitions {
			requireNoError(c.t, "offset fetch partition", p.ErrorCode, nil)
			offsets = append(offsets, p.Offset)
		}
		return true
	})
	return offsets
}

// retriableForGroups reports the errors a group client retries: the
// coordinator is loading, or this node has not (yet) taken it over.
func retriableForGroups(code int16) bool {
	return code == kerr.CoordinatorLoadInProgress.Code || code == kerr.NotCoordinator.Code
}

// produceIdempotent sends one idempotent batch with acks=all and returns
// the base offset and error code.
func (cl *testClient) produceIdempotent(topic string, producerID int64, producerEpoch int16, sequence int32, values ...string) (int64, int16) {
	cl.node.t.Helper()
	spec := batch.Spec{
		BaseTimestamp: cl.node.machine.Clock.Now().UnixMilli(),
		ProducerID:    producerID, ProducerEpoch: producerEpoch, BaseSequence: sequence,
	}
	for _, v := range values {
		spec.Records = append(spec.Records, batch.Record{Value: []byte(v)})
	}
	req := kmsg.NewPtrProduceRequest()
	req.Version = 9
	req.Acks = -1
	req.TimeoutMillis = 30_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch.Build(spec)
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	answer := cl.request(req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	return answer.BaseOffset, answer.ErrorCode
}

// An idempotent producer whose acknowledgement was lost retries against the
// new leader after a failover: the followers recorded the batch's producer
// state as they replicated it, so the retry is answered with the original
// offset and the record is in the log once.
func TestClusterIdempotentRetryAfterFailoverIsNotDuplicated(t *testing.T) {
	c := newTestCluster(t, 3, 23)
	c.client(c.controllerLeader()).createTopicWithConfigs("orders", 1, 3, metadata.ConfigMinInsyncReplicas, "2")
	leader := c.awaitPartitionLeader("orders", 0, -1)
	client := c.client(leader)
	init := kmsg.NewPtrInitProducerIDRequest()
	init.Version = 4
	ids := client.request(init).(*kmsg.InitProducerIDResponse)
	requireNoError(t, "producer id", ids.ErrorCode, nil)

	first, code := client.produceIdempotent("orders", ids.ProducerID, ids.ProducerEpoch, 0, "a", "b")
	requireNoError(t, "first batch", code, nil)
	c.crash(leader)
	next := c.awaitPartitionLeader("orders", 0, leader)
	retried, code := c.client(next).produceIdempotent("orders", ids.ProducerID, ids.ProducerEpoch, 0, "a", "b")
	requireNoError(t, "retried batch", code, nil)
	if retried != first {
		t.Fatalf("the retry was answered with offset %d, the original is at %d", retried, first)
	}
	after, code := c.client(next).produceIdempotent("orders", ids.ProducerID, ids.ProducerEpoch, 2, "c")
	requireNoError(t, "next batch", code, nil)
	if after != first+2 {
		t.Fatalf("the next batch is at %d, want %d", after, first+2)
	}
	c.runUntil("the new leader serves all three", failoverWaitMax, func() bool {
		got, code, _ := c.client(next).fetchAll("orders", 0, 0)
		return code == 0 && slices.Equal(got, []string{"a", "b", "c"})
	})
}

// A replicated cluster's run, failover included, replays from its seed.
func TestClusterReplicationReplaysFromItsSeed(t *testing.T) {
	hash := func() string {
		c := newTestCluster(t, 3, 24)
		c.client(c.controllerLeader()).createTopicWithConfigs("orders", 2, 3, metadata.ConfigMinInsyncReplicas, "2")
		leader := c.awaitPartitionLeader("orders", 0, -1)
		for i := range 10 {
			c.client(leader).produce("orders", 0, fmt.Sprintf("v%d", i))
		}
		c.crash(leader)
		c.run(20 * time.Second)
		c.restart(leader)
		c.run(20 * time.Second)
		return c.kernel.Trace().Hash()
	}
	if first, second := hash(), hash(); first != second {
		t.Fatalf("one seed gave two traces: %s and %s", first, second)
	}
}

// A follower cut off from its leader (but not from the controller, so it
// stays registered and unfenced) leaves the ISR after replica.lag.time.max.ms
// by the leader's AlterPartition, and comes back by another once healed.
func TestClusterISRShrinksAndGrowsThroughTheController(t *testing.T) {
	const lag = 2 * time.Second
	c := newTestCluster(t, 3, 25, func(config *Config) { config.ReplicaLagTimeMax = lag })
	controller := c.controllerLeader()
	c.client(controller).createTopicWithConfigs("orders", 3, 3)
	var partition, leader, follower int32 = -1, -1, -1
	for index := range int32(3) {
		if l := c.awaitPartitionLeader("orders", index, -1); l != controller {
			partition, leader = index, l
			break
		}
	}
	if partition < 0 {
		t.Fatal("the controller leads every partition")
	}
	for _, id := range c.ids {
		if id != controller && id != leader {
			follower = id
		}
	}

	c.network.Partition([]string{clusterHost(follower)}, []string{clusterHost(leader)})
	took := c.runUntil("the leader shrinks the ISR", 2*lag+10*time.Second, func() bool {
		return !slices.Contains(c.partitionState(controller, "orders", partition).ISR, follower)
	})
	if took < lag {
		t.Fatalf("the ISR shrank %v after the cut, within the lag time %v", took, lag)
	}
	if c.nodes[controller].broker.image.Brokers[follower].Fenced {
		t.Fatal("the follower was fenced: the controller, not the leader, shrank the ISR")
	}
	// Writes commit without it meanwhile.
	c.client(leader).produce("orders", partition, "while cut")

	c.network.Heal()
	c.runUntil("the follower rejoins the ISR", failoverWaitMax, func() bool {
		return slices.Contains(c.partitionState(controller, "orders", partition).ISR, follower)
	})
	if got := c.logValues(follower, "orders", partition); !slices.Equal(got, []string{"0:while cut"}) {
		t.Fatalf("the follower's log %v", got)
	}
}
