package broker

import "time"

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
}

// DefaultConfig returns the defaults, for node 1 on 127.0.0.1:9092.
func DefaultConfig() Config {
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
	}
}
