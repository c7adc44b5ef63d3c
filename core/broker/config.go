package broker

import (
	"time"

	"sluice/core/group"
)

// Config is a broker's settings. Field comments name the equivalent Kafka
// broker setting and give its default.
type Config struct {
	// NodeID is node.id. Default 1.
	NodeID int32
	// AdvertisedHost and AdvertisedPort are what Metadata tells clients
	// to connect to (advertised.listeners).
	AdvertisedHost string
	AdvertisedPort int32
	// Rack is broker.rack; empty for none.
	Rack string

	// AutoCreateTopics is auto.create.topics.enable: a Metadata request
	// naming an unknown topic creates it, when the client allows it.
	// Default true, as in Kafka.
	AutoCreateTopics bool
	// DefaultPartitions is num.partitions, for auto-created topics and
	// CreateTopics with -1 partitions. Default 1.
	DefaultPartitions int32
	// DefaultReplicationFactor is default.replication.factor. Default 1.
	DefaultReplicationFactor int16

	// TopicDefaults overrides Kafka's defaults of topic configs for this
	// broker, keyed by topic config name (retention.ms for Kafka's
	// log.retention.ms, and so on).
	TopicDefaults map[string]string

	// RetentionCheckInterval is log.retention.check.interval.ms. Default
	// 5 minutes.
	RetentionCheckInterval time.Duration
	// ProducerIDExpiration is producer.id.expiration.ms: idempotent
	// producer state idle this long is forgotten. Default 1 day.
	ProducerIDExpiration time.Duration
	// FetchWaitMax caps a fetch's MaxWaitMs. Default 30 s.
	FetchWaitMax time.Duration

	// Consumer groups and their committed offsets (core/group).

	// OffsetsTopicPartitions is offsets.topic.num.partitions: the
	// partitions __consumer_offsets is created with. Default 50.
	OffsetsTopicPartitions int32
	// OffsetsTopicReplicationFactor is offsets.topic.replication.factor;
	// the topic gets min(this, live brokers) replicas. Default 3.
	OffsetsTopicReplicationFactor int16
	// OffsetsTopicSegmentBytes is offsets.topic.segment.bytes. Default
	// 100 MiB.
	OffsetsTopicSegmentBytes int64
	// GroupMinSessionTimeout and GroupMaxSessionTimeout are
	// group.min.session.timeout.ms and group.max.session.timeout.ms.
	// Defaults 6 s and 30 min.
	GroupMinSessionTimeout time.Duration
	GroupMaxSessionTimeout time.Duration
	// GroupInitialRebalanceDelay is group.initial.rebalance.delay.ms.
	// Default 3 s.
	GroupInitialRebalanceDelay time.Duration
	// GroupMaxSize is group.max.size. Default unlimited (math.MaxInt32).
	GroupMaxSize int
	// OffsetsRetention is offsets.retention.minutes. Default 7 days.
	OffsetsRetention time.Duration
	// OffsetsRetentionCheckInterval is
	// offsets.retention.check.interval.ms. Default 10 min.
	OffsetsRetentionCheckInterval time.Duration
	// OffsetMetadataMaxBytes is offset.metadata.max.bytes. Default 4096.
	OffsetMetadataMaxBytes int
	// OffsetCommitTimeout is offsets.commit.timeout.ms. Default 5 s.
	OffsetCommitTimeout time.Duration
}

// DefaultConfig returns the defaults, for node 1 on 127.0.0.1:9092.
func DefaultConfig() Config {
	groups := group.DefaultConfig()
	return Config{
		NodeID:                   1,
		AdvertisedHost:           "127.0.0.1",
		AdvertisedPort:           9092,
		AutoCreateTopics:         true,
		DefaultPartitions:        1,
		DefaultReplicationFactor: 1,
		TopicDefaults:            map[string]string{},
		RetentionCheckInterval:   5 * time.Minute,
		ProducerIDExpiration:     24 * time.Hour,
		FetchWaitMax:             30 * time.Second,

		OffsetsTopicPartitions:        groups.OffsetsTopicPartitions,
		OffsetsTopicReplicationFactor: 3,
		OffsetsTopicSegmentBytes:      100 << 20,
		GroupMinSessionTimeout:        groups.MinSessionTimeout,
		GroupMaxSessionTimeout:        groups.MaxSessionTimeout,
		GroupInitialRebalanceDelay:    groups.InitialRebalanceDelay,
		GroupMaxSize:                  groups.MaxSize,
		OffsetsRetention:              groups.OffsetsRetention,
		OffsetsRetentionCheckInterval: groups.OffsetsRetentionCheckInterval,
		OffsetMetadataMaxBytes:        groups.OffsetMetadataMaxBytes,
		OffsetCommitTimeout:           groups.OffsetCommitTimeout,
	}
}
