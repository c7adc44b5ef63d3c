package simclient

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/jepsen/history"
	"sluice/sim/kernel"
)

// metadataCache is the client's view of the cluster: broker addresses and,
// for each topic it asked about, who leads each partition. It is refreshed
// on demand (a component found it stale) and never on a timer; refreshes
// are at least MetadataRefreshBackoff apart, and callers asking while one
// is under way wait for it.
type metadataCache struct {
	brokers map[int32]string          // node id → "host:port"; lookups only
	topics  map[string]*topicMetadata // lookups only
	// wanted are the topics every refresh asks about, sorted. They
	// survive a crash: they are the program's configuration.
	wanted []string

	refreshing     bool
	waiters        []func(error)
	refreshed      bool  // a refresh has started since the process started
	lastRefreshAt  int64 // when the last one started
	refreshesTotal int64
}

type topicMetadata struct {
	errorCode  int16
	partitions []partitionMetadata // by partition index
}

type partitionMetadata struct {
	errorCode   int16
	leader      int32
	leaderEpoch int32
}

func newMetadataCache(wanted []string) metadataCache {
	return metadataCache{brokers: map[int32]string{}, topics: map[string]*topicMetadata{}, wanted: wanted}
}

// brokerAddresses lists the known brokers' addresses by node id.
func (m *metadataCache) brokerAddresses() []string {
	nodes := make([]int32, 0, len(m.brokers))
	for node := range m.brokers {
		nodes = append(nodes, node)
	}
	slices.Sort(nodes)
	addresses := make([]string, 0, len(nodes))
	for _, node := range nodes {
		addresses = append(addresses, m.brokers[node])
	}
	return addresses
}

// WantTopic adds a topic to those every metadata refresh asks about.
func (c *Client) WantTopic(topic string) {
	if i, found := slices.BinarySearch(c.metadata.wanted, topic); !found {
		c.metadata.wanted = slices.Insert(c.metadata.wanted, i, topic)
	}
}

// RefreshMetadata asks a broker for the wanted topics and calls done once
// the cache holds the answer (or with the error that prevented it), from a
// later event.
func (c *Client) RefreshMetadata(done func(error)) {
	m := &c.metadata
	if len(m.waiters) >= metadataWaitersMax {
		c.later(func() { done(ErrTooManyPending) })
		return
	}
	m.waiters = append(m.waiters, done)
	if m.refreshing {
		return
	}
	m.refreshing = true
	delay := int64(0)
	if m.refreshed {
		delay = max(0, m.lastRefreshAt+int64(c.config.MetadataRefreshBackoff)-c.kernel.Now())
	}
	c.kernel.Post(delay, c.process, "simclient.metadata", kernel.Func(c.startRefreshEvent))
}

func (c *Client) startRefresh() {
	m := &c.metadata
	m.refreshed = true
	m.lastRefreshAt = c.kernel.Now()
	c.stats.MetadataRefreshes++
	req := kmsg.NewPtrMetadataRequest()
	req.AllowAutoTopicCreation = c.config.AutoCreateTopics
	req.Topics = []kmsg.MetadataRequestTopic{} // empty, not null: null asks for every topic
	for _, topic := range m.wanted {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(topic)
		req.Topics = append(req.Topics, t)
	}
	c.RequestAny(req, func(resp kmsg.Response, err error) {
		if err == nil {
			c.applyMetadata(resp.(*kmsg.MetadataResponse))
		}
		m.refreshing = false
		waiters := m.waiters
		m.waiters = nil
		for _, done := range waiters {
			done(err)
		}
	})
}

// applyMetadata replaces the cache's brokers and the topics answered.
func (c *Client) applyMetadata(resp *kmsg.MetadataResponse) {
	m := &c.metadata
	// The brokers rarely change between refreshes: the map is updated in
	// place rather than made again, and an address already known is kept
	// rather than formatted again.
	for _, b := range resp.Brokers {
		m.brokers[b.NodeID] = brokerAddress(m.brokers[b.NodeID], b.Host, b.Port)
	}
	for node := range m.brokers { // order-independent: deletes what the answer left out
		answered := slices.ContainsFunc(resp.Brokers, func(b kmsg.MetadataResponseBroker) bool { return b.NodeID == node })
		if !answered {
			delete(m.brokers, node)
		}
	}
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		tm := &topicMetadata{errorCode: t.ErrorCode}
		// The answer's highest partition index sizes the table (one
		// allocation); the partitions it leaves out are unknown.
		known := 0
		for _, p := range t.Partitions {
			if p.Partition >= 0 && int(p.Partition) < len(t.Partitions) {
				known = max(known, int(p.Partition)+1)
			}
		}
		if known > 0 {
			tm.partitions = make([]partitionMetadata, known)
			for i := range tm.partitions {
				tm.partitions[i] = partitionMetadata{errorCode: kerr.UnknownTopicOrPartition.Code, leader: -1, leaderEpoch: -1}
			}
		}
		for _, p := range t.Partitions {
			if p.Partition < 0 || int(p.Partition) >= len(t.Partitions) {
				continue // a partition index no topic of this size has
			}
			tm.partitions[p.Partition] = partitionMetadata{errorCode: p.ErrorCode, leader: p.Leader, leaderEpoch: p.LeaderEpoch}
		}
		m.topics[*t.Topic] = tm
	}
}

// brokerAddress is "host:port", which is known when it is the same as
// previous.
func brokerAddress(previous, host string, port int32) string {
	var room [64]byte
	address := strconv.AppendInt(append(append(room[:0], host...), ':'), int64(port), 10)
	if string(address) == previous { // compared without a copy
		return previous
	}
	return string(address)
}

// Leader is who leads a partition, as far as the cache knows, and in which
// leader epoch. The error says why the client cannot send to it: a Kafka
// error (unknown topic, no leader) or ErrUnknownBroker.
func (c *Client) Leader(tp history.TopicPartition) (node int32, leaderEpoch int32, err error) {
	t := c.metadata.topics[tp.Topic]
	switch {
	case t == nil:
		return -1, -1, kerr.UnknownTopicOrPartition
	case t.errorCode != 0 && len(t.partitions) == 0:
		return -1, -1, kerr.ErrorForCode(t.errorCode)
	case tp.Partition < 0 || int(tp.Partition) >= len(t.partitions):
		return -1, -1, kerr.UnknownTopicOrPartition
	}
	p := t.partitions[tp.Partition]
	switch {
	case p.leader < 0:
		return -1, -1, kerr.LeaderNotAvailable
	case c.metadata.brokers[p.leader] == "":
		return -1, -1, fmt.Errorf("%w: node %d leads %s", ErrUnknownBroker, p.leader, tp)
	}
	return p.leader, p.leaderEpoch, nil
}

// Partitions is how many partitions the cache knows a topic to have, 0 if
// it knows nothing of it.
func (c *Client) Partitions(topic string) int {
	if t := c.metadata.topics[topic]; t != nil {
		return len(t.partitions)
	}
	return 0
}
