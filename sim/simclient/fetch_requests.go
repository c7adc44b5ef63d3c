package simclient

import (
	"cmp"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/jepsen/history"
)

// The requests a consumer reads with, shared by the Reader and the
// GroupConsumer: both ask a partition's leader where the log starts or
// ends (ListOffsets) and read from their positions (Fetch), one leader at
// a time.

// ListOffsets' special timestamps.
const (
	timestampLatest   = -1 // the high watermark
	timestampEarliest = -2 // the log start offset
)

// fetched is one partition of a fetch, with the position it was read from.
type fetched struct {
	partition history.TopicPartition
	from      int64
}

// leaderPartitions are the partitions one leader serves.
type leaderPartitions struct {
	leader     int32
	partitions []history.TopicPartition
}

// leaderGroups groups a consumer's partitions by their leader (see
// group). It keeps its slices from one call to the next: a consumer groups
// its partitions before every fetch, and what it gets lives only until it
// has built its request (which copies the partitions it takes).
type leaderGroups struct {
	groups []leaderPartitions
}

// group groups partitions by their leader as the client's metadata knows
// it, leaders in ascending order, and reports whether some partition's
// leader is unknown. A consumer's partitions have a handful of leaders at
// most, so a linear search finds each one's group. The groups are valid
// until the next call.
func (b *leaderGroups) group(c *Client, tps []history.TopicPartition) (groups []leaderPartitions, missing bool) {
	groups = b.groups[:0]
	for _, tp := range tps {
		leader, _, err := c.Leader(tp)
		if err != nil {
			missing = true
			continue
		}
		at := slices.IndexFunc(groups, func(g leaderPartitions) bool { return g.leader == leader })
		if at < 0 {
			at = len(groups)
			if at < cap(groups) {
				groups = groups[:at+1] // an old group: append to its slice
			} else {
				groups = append(groups, leaderPartitions{})
			}
			groups[at].leader, groups[at].partitions = leader, groups[at].partitions[:0]
		}
		groups[at].partitions = append(groups[at].partitions, tp)
	}
	slices.SortFunc(groups, func(x, y leaderPartitions) int { return cmp.Compare(x.leader, y.leader) })
	b.groups = groups
	return groups, missing
}

// newListOffsetsRequest asks where each partition starts (earliest) or
// ends (latest), fenced by the leader epoch the client knows.
func newListOffsetsRequest(c *Client, tps []history.TopicPartition, timestamp int64) *kmsg.ListOffsetsRequest {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	for _, tp := range tps {
		_, epoch, _ := c.Leader(tp)
		partition := kmsg.NewListOffsetsRequestTopicPartition()
		partition.Partition = tp.Partition
		partition.CurrentLeaderEpoch = epoch
		partition.Timestamp = timestamp
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != tp.Topic {
			topic := kmsg.NewListOffsetsRequestTopic()
			topic.Topic = tp.Topic
			req.Topics = append(req.Topics, topic)
		}
		topic := &req.Topics[len(req.Topics)-1]
		topic.Partitions = append(topic.Partitions, partition)
	}
	return req
}

// fetchBuffers are what a consumer builds its fetches and reads their
// answers with, kept from one fetch to the next: a consumer has one fetch
// in flight at most, the client keeps nothing of a request once it has
// answered it (the frame it sent was encoded apart), and the history
// copies a poll it records. A fetch used to allocate all of them anew.
type fetchBuffers struct {
	// asked are the partitions of the fetch in flight, with their
	// positions, until its answer has been read.
	asked      []fetched
	request    kmsg.FetchRequest
	topics     []kmsg.FetchRequestTopic
	partitions []kmsg.FetchRequestTopicPartition
	// polls and records are what readFetchAnswer reads an answer into,
	// valid until the next fetch.
	polls   []history.Poll
	records []history.Record
}

// ask starts a fetch's list of partitions.
func (b *fetchBuffers) ask(capacity int) {
	b.asked = slices.Grow(b.asked[:0], capacity)
}

// newFetchRequest reads each asked partition from its position, without a
// fetch session (KIP-227), fenced by the leader epoch the client knows.
// The request is b's, valid until the next call.
func (b *fetchBuffers) newFetchRequest(c *Client, config FetchConfig) *kmsg.FetchRequest {
	req := &b.request
	*req = kmsg.FetchRequest{}
	req.Default()
	req.ReplicaID = -1
	req.MaxWaitMillis = int32(config.FetchMaxWait / time.Millisecond)
	req.MinBytes = 1
	req.MaxBytes = config.FetchMaxBytes
	req.SessionID = 0
	req.SessionEpoch = -1
	// Every partition goes in one array, each topic's run of it capped at
	// its end.
	partitions := slices.Grow(b.partitions[:0], len(b.asked))[:len(b.asked)]
	topics := b.topics[:0]
	run := 0 // where the last topic's partitions start
	for i, a := range b.asked {
		_, epoch, _ := c.Leader(a.partition)
		partition := &partitions[i]
		*partition = kmsg.FetchRequestTopicPartition{}
		partition.Default()
		partition.Partition = a.partition.Partition
		partition.CurrentLeaderEpoch = epoch
		partition.FetchOffset = a.from
		partition.LastFetchedEpoch = -1
		partition.LogStartOffset = -1
		partition.PartitionMaxBytes = config.PartitionMaxBytes
		if n := len(topics); n == 0 || topics[n-1].Topic != a.partition.Topic {
			topic := kmsg.NewFetchRequestTopic()
			topic.Topic = a.partition.Topic
			topics = append(topics, topic)
			run = i
		}
		topics[len(topics)-1].Partitions = partitions[run : i+1 : i+1]
	}
	b.partitions, b.topics = partitions, topics
	req.Topics = topics
	return req
}
