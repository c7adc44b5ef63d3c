package replica

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	corelog "sluice/core/log"
	"sluice/core/metadata"
)

// Config is a partition's settings, resolved from its topic's configs and
// the broker's defaults.
type Config struct {
	Log corelog.Config

	// MinInsyncReplicas is min.insync.replicas.
	MinInsyncReplicas int
	// Durable is flush.messages=1: acknowledge and expose only fsynced
	// data. Otherwise the page cache is enough, and the log is synced
	// every FlushMessages messages or FlushInterval.
	Durable       bool
	FlushMessages int64
	FlushInterval time.Duration
	// MaxMessageBytes is max.message.bytes: the largest batch accepted.
	MaxMessageBytes int
	// LogAppendTime is message.timestamp.type=LogAppendTime.
	LogAppendTime bool
	// Compression is compression.type as a codec the leader writes every
	// produced batch in, or KeepProducerCompression ("producer", the
	// default): stored as produced.
	Compression int
	// TimestampBeforeMax and TimestampAfterMax bound how far a
	// CreateTime batch's timestamp may be from the broker's clock.
	TimestampBeforeMax, TimestampAfterMax time.Duration
	// Compact and Delete say what cleanup.policy holds: compact keeps the
	// latest record per key, delete applies retention; both may be set.
	Compact bool
	Delete  bool

	// ReplicaLagTimeMax is the broker's replica.lag.time.max.ms: a leader
	// takes out of the ISR a follower that has not caught up for this
	// long. Not a topic config; ConfigFrom gives Kafka's default and the
	// broker sets its own.
	ReplicaLagTimeMax time.Duration
	// DepartedWatch is how long a replica a reassignment removed still
	// counts in a leader's low watermark while its broker is alive: as
	// long as that broker may, its metadata lagging, still serve the
	// partition to consumers on its controller lease (the broker's
	// broker.session.timeout.ms; see lowWatermark). Not a topic config;
	// ConfigFrom gives Kafka's session default and the broker sets its
	// own.
	DepartedWatch time.Duration
}

// KeepProducerCompression is Config.Compression for compression.type
// "producer".
const KeepProducerCompression = -1

// ReplicaLagTimeMaxDefault is Kafka's replica.lag.time.max.ms default.
const ReplicaLagTimeMaxDefault = 30 * time.Second

// departedWatchDefault is Kafka's broker.session.timeout.ms default.
const departedWatchDefault = 9 * time.Second

// ConfigFrom resolves a topic's settings: explicit topic configs first,
// then the given defaults (broker-level overrides), then Kafka's defaults.
func ConfigFrom(topicConfigs, defaults map[string]string) (Config, error) {
	get := func(name string) string {
		if v, ok := topicConfigs[name]; ok {
			return v
		}
		if v, ok := defaults[name]; ok {
			return v
		}
		d, ok := metadata.LookupTopicConfig(name)
		if !ok {
			panic("replica: no definition for config " + name)
		}
		return d.Default
	}
	var firstErr error
	integer := func(name string) int64 {
		v, err := strconv.ParseInt(get(name), 10, 64)
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("config %s=%q: %v", name, get(name), err)
		}
		return v
	}
	milliseconds := func(name string) time.Duration {
		v := integer(name)
		if v < 0 {
			return time.Duration(v)
		}
		if v > int64(time.Duration(1<<63-1)/time.Millisecond) {
			return time.Duration(1<<63 - 1)
		}
		return time.Duration(v) * time.Millisecond
	}
	c := Config{Log: corelog.DefaultConfig(), ReplicaLagTimeMax: ReplicaLagTimeMaxDefault, DepartedWatch: departedWatchDefault}
	c.Log.SegmentBytes = integer(metadata.ConfigSegmentBytes)
	c.Log.SegmentAge = milliseconds(metadata.ConfigSegmentMs)
	c.Log.SegmentJitter = milliseconds(metadata.ConfigSegmentJitterMs)
	c.Log.SegmentIndexBytes = integer(metadata.ConfigSegmentIndexBytes)
	c.Log.RetentionBytes = integer(metadata.ConfigRetentionBytes)
	c.Log.RetentionAge = milliseconds(metadata.ConfigRetentionMs)
	if c.Log.RetentionAge < 0 {
		c.Log.RetentionAge = corelog.Unlimited
	}
	c.Log.IndexIntervalBytes = int(integer(metadata.ConfigIndexIntervalBytes))
	c.MinInsyncReplicas = int(integer(metadata.ConfigMinInsyncReplicas))
	c.FlushMessages = integer(metadata.ConfigFlushMessages)
	c.Durable = c.FlushMessages == 1
	c.FlushInterval = milliseconds(metadata.ConfigFlushMs)
	c.MaxMessageBytes = int(integer(metadata.ConfigMaxMessageBytes))
	c.LogAppendTime = get(metadata.ConfigMessageTimestampType) == "LogAppendTime"
	c.Compression = KeepProducerCompression
	if codec, ok := metadata.CompressionTypeCodec(get(metadata.ConfigCompressionType)); ok {
		c.Compression = codec
	}
	// Kafka 3.x's message.timestamp.difference.max.ms stands in for
	// either bound left at its default (LogConfig's
	// getMessageTimestampBeforeMaxMs and AfterMaxMs).
	timestampBound := func(name string) time.Duration {
		if integer(name) == math.MaxInt64 {
			return milliseconds(metadata.ConfigMessageTimestampDifferenceMs)
		}
		return milliseconds(name)
	}
	c.TimestampBeforeMax = timestampBound(metadata.ConfigMessageTimestampBeforeMs)
	c.TimestampAfterMax = timestampBound(metadata.ConfigMessageTimestampAfterMs)
	policy := get(metadata.ConfigCleanupPolicy)
	c.Compact = containsPolicy(policy, "compact")
	c.Log.Compacted = c.Compact
	c.Delete = containsPolicy(policy, "delete")
	c.Log.DeleteRetention = milliseconds(metadata.ConfigDeleteRetentionMs)
	c.Log.MinCompactionLag = milliseconds(metadata.ConfigMinCompactionLagMs)
	c.Log.MaxCompactionLag = milliseconds(metadata.ConfigMaxCompactionLagMs)
	ratio, err := strconv.ParseFloat(get(metadata.ConfigMinCleanableDirtyRatio), 64)
	if err != nil && firstErr == nil {
		firstErr = fmt.Errorf("config %s=%q: %v", metadata.ConfigMinCleanableDirtyRatio, get(metadata.ConfigMinCleanableDirtyRatio), err)
	}
	c.Log.MinCleanableDirtyRatio = ratio
	if firstErr != nil {
		return c, firstErr
	}
	if err := c.Log.Validate(); err != nil {
		return c, err
	}
	return c, nil
}

func containsPolicy(policy, want string) bool {
	for part := range strings.SplitSeq(policy, ",") { // no slice of parts to allocate
		if strings.TrimSpace(part) == want {
			return true
		}
	}
	return false
}
