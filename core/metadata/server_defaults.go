package metadata

// serverDefaultNames are the broker settings that set the defaults of the
// topic configs, as Kafka names them (KafkaConfig's synonyms of
// LogConfig's names). A topic config missing here (remote.storage.enable)
// has no broker-level default.
var serverDefaultNames = map[string]string{
	ConfigRetentionMs:                  "log.retention.ms",
	ConfigRetentionBytes:               "log.retention.bytes",
	ConfigSegmentBytes:                 "log.segment.bytes",
	ConfigSegmentMs:                    "log.roll.ms",
	ConfigSegmentJitterMs:              "log.roll.jitter.ms",
	ConfigSegmentIndexBytes:            "log.index.size.max.bytes",
	ConfigCleanupPolicy:                "log.cleanup.policy",
	ConfigMaxMessageBytes:              "message.max.bytes",
	ConfigMinInsyncReplicas:            "min.insync.replicas",
	ConfigFlushMessages:                "log.flush.interval.messages",
	ConfigFlushMs:                      "log.flush.interval.ms",
	ConfigMessageTimestampType:         "log.message.timestamp.type",
	ConfigMessageTimestampBeforeMs:     "log.message.timestamp.before.max.ms",
	ConfigMessageTimestampAfterMs:      "log.message.timestamp.after.max.ms",
	ConfigMessageTimestampDifferenceMs: "log.message.timestamp.difference.max.ms",
	ConfigMessageDownconversion:        "log.message.downconversion.enable",
	ConfigUncleanLeaderElection:        "unclean.leader.election.enable",
	ConfigDeleteRetentionMs:            "log.cleaner.delete.retention.ms",
	ConfigMinCompactionLagMs:           "log.cleaner.min.compaction.lag.ms",
	ConfigMaxCompactionLagMs:           "log.cleaner.max.compaction.lag.ms",
	ConfigMinCleanableDirtyRatio:       "log.cleaner.min.cleanable.ratio",
	ConfigIndexIntervalBytes:           "log.index.interval.bytes",
	ConfigFileDeleteDelayMs:            "log.segment.delete.delay.ms",
	ConfigPreallocate:                  "log.preallocate",
	ConfigLocalRetentionMs:             "log.local.retention.ms",
	ConfigLocalRetentionBytes:          "log.local.retention.bytes",
	ConfigCompressionType:              "compression.type",
	ConfigCompressionGzipLevel:         "compression.gzip.level",
	ConfigCompressionLz4Level:          "compression.lz4.level",
	ConfigCompressionZstdLevel:         "compression.zstd.level",
}

// ServerDefaultName is the broker setting that sets topicConfig's default
// (log.retention.ms for retention.ms), if there is one.
func ServerDefaultName(topicConfig string) (string, bool) {
	name, ok := serverDefaultNames[topicConfig]
	return name, ok
}

// TopicConfigOfServerDefault is the topic config whose default the broker
// setting name sets, if it sets one.
func TopicConfigOfServerDefault(name string) (string, bool) {
	topicConfig, ok := topicConfigsByServerDefault[name]
	return topicConfig, ok
}

var topicConfigsByServerDefault = func() map[string]string {
	byName := make(map[string]string, len(serverDefaultNames))
	for topicConfig, name := range serverDefaultNames { // order-independent: building a map of distinct keys
		byName[name] = topicConfig
	}
	return byName
}()

func init() {
	if len(topicConfigsByServerDefault) != len(serverDefaultNames) {
		panic("metadata: two topic configs share a broker setting")
	}
	for topicConfig := range serverDefaultNames { // order-independent: every entry is checked alike
		if _, known := LookupTopicConfig(topicConfig); !known {
			panic("metadata: a server default for unknown topic config " + topicConfig)
		}
	}
}
