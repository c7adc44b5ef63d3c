package broker

import (
	"time"

	"sluice/core/group"
	"sluice/core/replica"
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

	// StaticSettings are the Kafka broker settings the operator gave (a
	// properties file, --set): DescribeConfigs reports those as
	// STATIC_BROKER_CONFIG and the rest as Kafka's DEFAULT_CONFIG.
	StaticSettings map[string]bool

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

	// The cluster (cluster.go).

	// Roles is process.roles: whether this node is a broker (serves
	// clients, hosts partitions), a controller (a voter of the metadata
	// quorum, which may become the active controller), or both. The zero
	// value means both, the default for small clusters.
	Roles Roles
	// Voters is controller.quorum.voters: each voter's node id and
	// controller listener address. Empty means a single node: this node
	// is the only voter (at ControllerAddress, which nobody dials).
	Voters map[int32]string
	// ControllerAddress is this node's controller listener address, for
	// the single-node voter entry. Empty is fine on a single node.
	ControllerAddress string
	// SessionTimeout is broker.session.timeout.ms: the controller fences
	// a broker whose heartbeats stop for this long. Default 9 s.
	SessionTimeout time.Duration
	// LogDir names the data directory in DescribeLogDirs answers: log.dirs
	// as the operator gave it, made absolute. Empty: "/", the root of the
	// broker's own file system.
	LogDir string
	// HeartbeatInterval is broker.heartbeat.interval.ms. Default 2 s.
	HeartbeatInterval time.Duration
	// LeaderImbalanceCheckInterval is leader.imbalance.check.interval.seconds:
	// how often the active controller moves leaders back to their
	// preferred replicas. Default 300 s. AutoLeaderRebalanceDisabled is
	// auto.leader.rebalance.enable=false: never.
	LeaderImbalanceCheckInterval time.Duration
	AutoLeaderRebalanceDisabled  bool
	// ElectionTimeout is controller.quorum.election.timeout.ms. Default
	// 1 s.
	ElectionTimeout time.Duration
	// FetchTimeout is controller.quorum.fetch.timeout.ms. Default 2 s.
	FetchTimeout time.Duration
	// QuorumRequestTimeout is controller.quorum.request.timeout.ms.
	// Default 2 s.
	QuorumRequestTimeout time.Duration
	// SnapshotEveryRecords snapshots the metadata after this many
	// committed records (Kafka's
	// metadata.log.max.record.bytes.between.snapshots counts bytes).
	// Default 20,000; zero never snapshots.
	SnapshotEveryRecords int
	// ControllerRequestTimeout bounds a request forwarded to the active
	// controller, and a registration or heartbeat sent to it (Kafka's
	// request.timeout.ms for the controller channel). Default 30 s.
	ControllerRequestTimeout time.Duration
	// ControlledShutdownTimeout bounds how long Shutdown waits for the
	// controller to move this broker's leaderships away before stopping
	// anyway. Default 5 s.
	ControlledShutdownTimeout time.Duration

	// Partition replication (replication.go).

	// ReplicaLagTimeMax is replica.lag.time.max.ms: a leader takes out of
	// the ISR a follower that has not caught up with it for this long.
	// Default 30 s.
	ReplicaLagTimeMax time.Duration
	// ReplicaFetchWaitMax is replica.fetch.wait.max.ms: how long a
	// follower's fetch waits at the leader for new records. Default
	// 500 ms.
	ReplicaFetchWaitMax time.Duration
}

// Roles is process.roles.
type Roles struct {
	Broker     bool
	Controller bool
}

// resolved is the roles in force: neither means both.
func (r Roles) resolved() Roles {
	if !r.Broker && !r.Controller {
		return Roles{Broker: true, Controller: true}
	}
	return r
}

// leadershipLeaseFetchTimeoutDivisor makes the controller's leadership
// lease a quarter of the quorum's FetchTimeout (controller
// holdsLeadershipLease). The lease holds while the leader's clock counts
// less than it, and no successor is elected before a voter's clock has
// counted FetchTimeout, so it is sound while no clock runs four times as
// fast as another: the simulator's drift reaches a factor of 1.56 (0.8
// against 1.25). Half would do within a factor of two, and save the
// cluster workload 2.8% of its simulated events (fewer no-op commits to
// answer heartbeats); the quarter is kept as the margin.
const leadershipLeaseFetchTimeoutDivisor = 4

// Defaults of the cluster settings, Kafka's unless said otherwise.
const (
	sessionTimeoutDefault            = 9 * time.Second
	heartbeatIntervalDefault         = 2 * time.Second
	electionTimeoutDefault           = time.Second
	fetchTimeoutDefault              = 2 * time.Second
	quorumRequestTimeoutDefault      = 2 * time.Second
	snapshotEveryRecordsDefault      = 20_000
	controllerRequestTimeoutDefault  = 30 * time.Second
	controlledShutdownTimeoutDefault = 5 * time.Second
	replicaLagTimeMaxDefault         = replica.ReplicaLagTimeMaxDefault
	replicaFetchWaitMaxDefault       = 500 * time.Millisecond
	leaderImbalanceCheckDefault      = 300 * time.Second
)

// withClusterDefaults fills unset cluster settings, so that a Config
// built before they existed still starts.
func (c Config) withClusterDefaults() Config {
	c.Roles = c.Roles.resolved()
	setDefault := func(d *time.Duration, value time.Duration) {
		if *d <= 0 {
			*d = value
		}
	}
	setDefault(&c.SessionTimeout, sessionTimeoutDefault)
	setDefault(&c.HeartbeatInterval, heartbeatIntervalDefault)
	setDefault(&c.LeaderImbalanceCheckInterval, leaderImbalanceCheckDefault)
	setDefault(&c.ElectionTimeout, electionTimeoutDefault)
	setDefault(&c.FetchTimeout, fetchTimeoutDefault)
	setDefault(&c.QuorumRequestTimeout, quorumRequestTimeoutDefault)
	setDefault(&c.ControllerRequestTimeout, controllerRequestTimeoutDefault)
	setDefault(&c.ControlledShutdownTimeout, controlledShutdownTimeoutDefault)
	setDefault(&c.ReplicaLagTimeMax, replicaLagTimeMaxDefault)
	setDefault(&c.ReplicaFetchWaitMax, replicaFetchWaitMaxDefault)
	if len(c.Voters) == 0 {
		c.Voters = map[int32]string{c.NodeID: c.ControllerAddress}
	}
	return c
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

		Roles:                        Roles{Broker: true, Controller: true},
		SessionTimeout:               sessionTimeoutDefault,
		HeartbeatInterval:            heartbeatIntervalDefault,
		LeaderImbalanceCheckInterval: leaderImbalanceCheckDefault,
		ElectionTimeout:              electionTimeoutDefault,
		FetchTimeout:                 fetchTimeoutDefault,
		QuorumRequestTimeout:         quorumRequestTimeoutDefault,
		SnapshotEveryRecords:         snapshotEveryRecordsDefault,
		ControllerRequestTimeout:     controllerRequestTimeoutDefault,
		ControlledShutdownTimeout:    controlledShutdownTimeoutDefault,
		ReplicaLagTimeMax:            replicaLagTimeMaxDefault,
		ReplicaFetchWaitMax:          replicaFetchWaitMaxDefault,
	}
}
