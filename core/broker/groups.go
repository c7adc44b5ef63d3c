package broker

// This file connects the broker to its consumer group coordinator
// (core/group), which keeps its state in the internal topic
// __consumer_offsets: the broker creates that topic on first use, tells
// the coordinator which of its partitions this node leads (Load, Unload:
// the coordinator moves with that partition's leadership), and gives it
// offsetsLog to write and replay them through. The group APIs' handlers
// (08_offset_commit.go ... 47_offset_delete.go) only hand requests over.

import (
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
	"sluice/core/group"
	"sluice/core/metadata"
	"sluice/core/replica"
)

// offsetsTopicWaitersMax bounds the FindCoordinator requests waiting for
// __consumer_offsets to be created; beyond it they are answered at once
// (COORDINATOR_NOT_AVAILABLE, which clients retry).
const offsetsTopicWaitersMax = 10_000

// groupCoordination is the broker's side of consumer groups.
type groupCoordination struct {
	coordinator *group.Coordinator
	// creatingTopic is set while this broker asks the controller to
	// create __consumer_offsets; waiting are called when that is over.
	creatingTopic bool
	waiting       []func()
	// reconcileScheduled coalesces the reconciliations the records of
	// one metadata batch ask for into one, on the next turn of the loop.
	reconcileScheduled bool
}

// startGroups creates the coordinator. It must run before the topics are
// reconciled at start, which tells it what to load.
func (b *Broker) startGroups() error {
	c, err := group.New(b.w, b.groupConfig(), offsetsLog{b: b}, b.partitionExists)
	if err != nil {
		return err
	}
	b.groups.coordinator = c
	return nil
}

// groupConfig is the coordinator's share of the broker's settings.
func (b *Broker) groupConfig() group.Config {
	return group.Config{
		OffsetsTopicPartitions:        b.config.OffsetsTopicPartitions,
		MinSessionTimeout:             b.config.GroupMinSessionTimeout,
		MaxSessionTimeout:             b.config.GroupMaxSessionTimeout,
		InitialRebalanceDelay:         b.config.GroupInitialRebalanceDelay,
		MaxSize:                       b.config.GroupMaxSize,
		OffsetsRetention:              b.config.OffsetsRetention,
		OffsetsRetentionCheckInterval: b.config.OffsetsRetentionCheckInterval,
		OffsetMetadataMaxBytes:        b.config.OffsetMetadataMaxBytes,
		OffsetCommitTimeout:           b.config.OffsetCommitTimeout,
	}
}

func (b *Broker) partitionExists(topic string, partition int32) bool {
	_, exists := b.image.Partition(topic, partition)
	return exists
}

// watchOffsetsPartition wires a newly opened replica of
// __consumer_offsets to the coordinator: a partition being loaded waits
// for its high watermark to cover its log.
func (b *Broker) watchOffsetsPartition(key partitionKey, p *replica.Partition) {
	if key.topic != metadata.ConsumerOffsetsTopic {
		return
	}
	p.OnHighWatermark(func() { b.groups.coordinator.HighWatermarkMoved(key.partition) })
	// A replica leads only once its recovery is durable, which may come
	// after the metadata made it leader.
	p.OnLeadershipChange(func() {
		if t, ok := b.image.Topics[metadata.ConsumerOffsetsTopic]; ok {
			b.reconcileOffsetsTopic(t)
		}
	})
}

// reconcileOffsetsTopic tells the coordinator, after the metadata changed,
// which partitions of __consumer_offsets this node leads: it loads those
// and forgets the others.
//
// It runs once the records committed together have all been applied: a
// newly created topic's partitions arrive one record at a time, and telling
// the coordinator every intermediate partition count would map groups to
// the wrong partitions in between.
func (b *Broker) reconcileOffsetsTopic(t *metadata.Topic) {
	if t.Name != metadata.ConsumerOffsetsTopic || b.groups.reconcileScheduled {
		return
	}
	b.groups.reconcileScheduled = true
	b.w.Clock.AfterFunc(0, func() {
		b.groups.reconcileScheduled = false
		if current, ok := b.image.Topics[metadata.ConsumerOffsetsTopic]; ok && b.groups.coordinator != nil {
			b.loadOffsetsPartitions(current)
		}
	})
}

// loadOffsetsPartitions tells the coordinator the partition count and
// which partitions to load or unload.
func (b *Broker) loadOffsetsPartitions(t *metadata.Topic) {
	c := b.groups.coordinator
	c.SetPartitionCount(int32(len(t.Partitions)))
	for _, mp := range t.Partitions {
		p, open := b.partitions[partitionKey{topic: t.Name, partition: mp.Index}]
		if open && p.IsLeader() && mp.Leader == b.config.NodeID {
			c.Load(mp.Index, mp.LeaderEpoch)
		} else {
			c.Unload(mp.Index)
		}
	}
}

// offsetsTopicRemoved unloads every group when __consumer_offsets is
// deleted.
func (b *Broker) offsetsTopicRemoved(t *metadata.Topic) {
	if t.Name != metadata.ConsumerOffsetsTopic {
		return
	}
	for index := range int32(len(t.Partitions)) {
		b.groups.coordinator.Unload(index)
	}
}

// ensureOffsetsTopic calls done once __consumer_offsets exists or its
// creation failed: at once if it exists, after the controller's answer
// otherwise. It is created as Kafka creates it: offsets.topic.num.partitions
// partitions, min(offsets.topic.replication.factor, live brokers)
// replicas, compacted, with offsets.topic.segment.bytes segments.
func (b *Broker) ensureOffsetsTopic(done func()) {
	if _, exists := b.image.Topics[metadata.ConsumerOffsetsTopic]; exists {
		done()
		return
	}
	g := &b.groups
	if len(g.waiting) >= offsetsTopicWaitersMax {
		done()
		return
	}
	g.waiting = append(g.waiting, done)
	if g.creatingTopic {
		return
	}
	replicationFactor := min(b.config.OffsetsTopicReplicationFactor, int16(b.liveBrokers()))
	if replicationFactor < 1 {
		// Not even this broker's registration has committed yet.
		b.offsetsTopicSettled()
		return
	}
	g.creatingTopic = true
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	req.TimeoutMillis = 30_000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic = metadata.ConsumerOffsetsTopic
	t.NumPartitions = b.config.OffsetsTopicPartitions
	t.ReplicationFactor = replicationFactor
	for _, config := range [][2]string{
		{metadata.ConfigCleanupPolicy, "compact"},
		{metadata.ConfigSegmentBytes, strconv.FormatInt(b.config.OffsetsTopicSegmentBytes, 10)},
	} {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		value := config[1]
		c.Name, c.Value = config[0], &value
		t.Configs = append(t.Configs, c)
	}
	req.Topics = append(req.Topics, t)
	b.log.Info("creating the offsets topic", "partitions", t.NumPartitions, "replication_factor", replicationFactor)
	b.createTopics(req, func(resp *kmsg.CreateTopicsResponse) {
		g.creatingTopic = false
		if code := resp.Topics[0].ErrorCode; code != 0 && code != kerr.TopicAlreadyExists.Code {
			b.log.Error("cannot create the offsets topic", "error", kerr.ErrorForCode(code))
		}
		b.offsetsTopicSettled()
	})
}

// offsetsTopicSettled calls everyone waiting for the offsets topic.
func (b *Broker) offsetsTopicSettled() {
	if t, ok := b.image.Topics[metadata.ConsumerOffsetsTopic]; ok {
		// The whole topic is in the image now: the coordinator can map
		// groups before FindCoordinator answers.
		b.loadOffsetsPartitions(t)
	}
	waiting := b.groups.waiting
	b.groups.waiting = nil
	for _, done := range waiting {
		done()
	}
}

// liveBrokers counts the registered, unfenced brokers.
func (b *Broker) liveBrokers() int {
	live := 0
	for _, id := range b.image.BrokerIDs() {
		if !b.image.Brokers[id].Fenced {
			live++
		}
	}
	return live
}

// groupClient is who sent a group request, as DescribeGroups shows it:
// the client id, and the host (Kafka's "/address" form, without port).
func groupClient(x *exchange) group.Client {
	client := group.Client{Host: "/" + hostOf(x.client.conn.RemoteAddr())}
	if id := x.request.Header.ClientID; id != nil {
		client.ID = *id
	}
	return client
}

// hostOf strips the port from "host:port" or "[v6]:port".
func hostOf(address string) string {
	if strings.HasPrefix(address, "[") {
		if end := strings.IndexByte(address, ']'); end > 0 {
			return address[1:end]
		}
	}
	if strings.Count(address, ":") == 1 {
		return address[:strings.IndexByte(address, ':')]
	}
	return address
}

// offsetsLog is group.Log over this broker's replicas of
// __consumer_offsets: writes are appended as leader and acknowledged
// acks=all, as every coordinator write is in Kafka.
type offsetsLog struct{ b *Broker }

func (l offsetsLog) Append(partition int32, records []batch.Record, done func(err error)) error {
	p, err := l.b.leaderPartition(partitionKey{topic: metadata.ConsumerOffsetsTopic, partition: partition})
	if err != nil {
		return err
	}
	encoded := batch.Build(batch.Spec{
		BaseTimestamp: l.b.w.Clock.Now().UnixMilli(),
		ProducerID:    batch.NoProducerID,
		Records:       records,
	})
	result, err := p.AppendOwnAsLeader(encoded, true)
	if err != nil {
		return err
	}
	returned := false
	p.WaitForAcks(result.LastOffset, func(err error) {
		if returned {
			done(err)
			return
		}
		// Committed already (page-cache mode, one replica): group.Log
		// promises done never runs inside Append.
		l.b.w.Clock.AfterFunc(0, func() { done(err) })
	})
	returned = true
	return nil
}

func (l offsetsLog) Read(partition int32, offset int64, maxBytes int) (group.ReadResult, error) {
	p, err := l.b.leaderPartition(partitionKey{topic: metadata.ConsumerOffsetsTopic, partition: partition})
	if err != nil {
		return group.ReadResult{}, err
	}
	result := group.ReadResult{
		LogStartOffset: p.LogStartOffset(),
		HighWatermark:  p.HighWatermark(),
		LogEndOffset:   p.LogEndOffset(),
	}
	offset = max(offset, result.LogStartOffset)
	if offset >= result.HighWatermark {
		return result, nil
	}
	read, err := p.Read(offset, maxBytes, true, -1)
	if err != nil {
		return result, err
	}
	result.Batches = read.Records
	return result, nil
}
