package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// metadataVersion and describeQuorumVersion are the versions the
// observer asks with.
const (
	metadataVersion       = 9
	describeQuorumVersion = 1
)

// metadataTopicName is the metadata quorum's partition.
const metadataTopicName = "__cluster_metadata"

// NodeView is what one node's Metadata answer says.
type NodeView struct {
	Node       int
	Brokers    []int32
	Controller int32
	// Partitions is every partition of every topic the answer lists.
	Partitions []PartitionView
}

// PartitionView is one partition as a Metadata answer shows it.
type PartitionView struct {
	Topic     string
	Partition int32
	Leader    int32
	Epoch     int32
	Replicas  []int32
	ISR       []int32
	// Error is the partition's error code's name, empty for none.
	Error string
}

// healthy: led, without error, every replica in sync.
func (p PartitionView) healthy() bool {
	if p.Error != "" || p.Leader < 0 || len(p.Replicas) == 0 {
		return false
	}
	isr := slices.Clone(p.ISR)
	replicas := slices.Clone(p.Replicas)
	slices.Sort(isr)
	slices.Sort(replicas)
	return slices.Equal(isr, replicas)
}

func (p PartitionView) String() string {
	text := fmt.Sprintf("%s-%d leader=%d epoch=%d replicas=%v isr=%v", p.Topic, p.Partition, p.Leader, p.Epoch, p.Replicas, p.ISR)
	if p.Error != "" {
		text += " error=" + p.Error
	}
	return text
}

// View asks node id for the cluster's metadata, every topic included.
func (c *Cluster) View(id int) (NodeView, error) {
	n := c.Node(id)
	req := kmsg.NewPtrMetadataRequest()
	req.SetVersion(metadataVersion)
	req.Topics = nil // every topic
	resp, err := askNode(n.listen, req, observerRequestTimeout)
	if err != nil {
		return NodeView{}, err
	}
	answer := resp.(*kmsg.MetadataResponse)
	view := NodeView{Node: id, Controller: answer.ControllerID}
	for _, b := range answer.Brokers {
		view.Brokers = append(view.Brokers, b.NodeID)
	}
	slices.Sort(view.Brokers)
	for _, t := range answer.Topics {
		if t.Topic == nil {
			continue
		}
		for _, p := range t.Partitions {
			pv := PartitionView{
				Topic: *t.Topic, Partition: p.Partition, Leader: p.Leader, Epoch: p.LeaderEpoch,
				Replicas: slices.Clone(p.Replicas), ISR: slices.Clone(p.ISR),
			}
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				pv.Error = err.Error()
			}
			view.Partitions = append(view.Partitions, pv)
		}
	}
	slices.SortFunc(view.Partitions, func(a, b PartitionView) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	return view, nil
}

// QuorumLeader asks the running nodes for the metadata quorum's leader
// and returns the first answer, or -1 when none knows.
func (c *Cluster) QuorumLeader() int32 {
	for _, n := range c.nodes {
		if leader := c.quorumLeaderSeenBy(n); leader >= 0 {
			return leader
		}
	}
	return -1
}

// quorumLeaderSeenBy asks one running node for the quorum's leader
// (DescribeQuorum); -1 if it is not running or does not know.
func (c *Cluster) quorumLeaderSeenBy(n *Node) int32 {
	if !n.Alive() || n.Paused() {
		return -1
	}
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.SetVersion(describeQuorumVersion)
	topic := kmsg.NewDescribeQuorumRequestTopic()
	topic.Topic = metadataTopicName
	topic.Partitions = append(topic.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, topic)
	resp, err := askNode(n.listen, req, observerRequestTimeout)
	if err != nil {
		return -1
	}
	answer := resp.(*kmsg.DescribeQuorumResponse)
	if answer.ErrorCode == 0 && len(answer.Topics) == 1 && len(answer.Topics[0].Partitions) == 1 &&
		answer.Topics[0].Partitions[0].ErrorCode == 0 && answer.Topics[0].Partitions[0].LeaderID >= 0 {
		return answer.Topics[0].Partitions[0].LeaderID
	}
	return -1
}

// Leaders maps each partition of topic to its leader, as the first
// running node that answers sees it; nil if none answers.
func (c *Cluster) Leaders(topic string) map[int32]int32 {
	for _, n := range c.nodes {
		if !n.Alive() || n.Paused() {
			continue
		}
		view, err := c.View(n.ID)
		if err != nil {
			continue
		}
		leaders := map[int32]int32{}
		for _, p := range view.Partitions {
			if p.Topic == topic {
				leaders[p.Partition] = p.Leader
			}
		}
		return leaders
	}
	return nil
}

// WaitBrokers waits until every node answers Metadata listing every
// broker.
func (c *Cluster) WaitBrokers(ctx context.Context, timeout time.Duration) error {
	return c.waitFor(ctx, timeout, "every node to list every broker", func() error {
		for _, n := range c.nodes {
			view, err := c.View(n.ID)
			if err != nil {
				return fmt.Errorf("node %d: %w", n.ID, err)
			}
			if len(view.Brokers) != len(c.nodes) {
				return fmt.Errorf("node %d lists brokers %v", n.ID, view.Brokers)
			}
		}
		return nil
	})
}

// WaitHealthy waits until the cluster has recovered: every node runs,
// unpaused, and its Metadata lists every broker, and every partition of
// topics (with every partition of __consumer_offsets, once it exists) has
// a leader and a full ISR, as every node sees it. It returns the last
// reason it was not, on timeout.
func (c *Cluster) WaitHealthy(ctx context.Context, timeout time.Duration, topics ...string) error {
	wanted := append(slices.Clone(topics), consumerOffsetsTopic)
	return c.waitFor(ctx, timeout, "a healthy cluster", func() error {
		for _, n := range c.nodes {
			if !n.Alive() || n.Paused() {
				return fmt.Errorf("node %d is not running", n.ID)
			}
			view, err := c.View(n.ID)
			if err != nil {
				return fmt.Errorf("node %d: %w", n.ID, err)
			}
			if len(view.Brokers) != len(c.nodes) {
				return fmt.Errorf("node %d lists brokers %v", n.ID, view.Brokers)
			}
			seen := map[string]bool{}
			for _, p := range view.Partitions {
				if !slices.Contains(wanted, p.Topic) {
					continue
				}
				seen[p.Topic] = true
				if !p.healthy() {
					return fmt.Errorf("node %d sees %s", n.ID, p)
				}
			}
			for _, topic := range topics {
				if !seen[topic] {
					return fmt.Errorf("node %d does not know topic %s", n.ID, topic)
				}
			}
		}
		return nil
	})
}

// waitFor polls check until it returns nil, timeout passes or ctx ends.
func (c *Cluster) waitFor(ctx context.Context, timeout time.Duration, what string, check func() error) error {
	deadline := time.Now().Add(timeout)
	interval := observerPollIntervalMin
	for {
		last := check()
		if last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("harness: waited %v for %s: %w", timeout, what, last)
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), last)
		case <-time.After(interval):
		}
		interval = min(interval*2, observerPollIntervalMax)
	}
}
