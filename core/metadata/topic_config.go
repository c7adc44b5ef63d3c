package metadata

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"sluice/core/batch"
	corelog "sluice/core/log"
)

// TopicConfigDefinition is one topic config Sluice takes (honoured, or
// accepted for Kafka's tools where its Doc says it changes nothing): its Kafka name,
// its default (the broker's, unless a topic sets its own), and how to check
// a value.
type TopicConfigDefinition struct {
	Name    string
	Default string
	Doc     string
	// Sensitive configs are never returned in DescribeConfigs; none yet.
	Sensitive bool
	validate  func(string) error
}

// Validate checks a value for this config.
func (d TopicConfigDefinition) Validate(value string) error {
	if err := d.validate(value); err != nil {
		return fmt.Errorf("invalid value %q for %s: %w", value, d.Name, err)
	}
	return nil
}

// Topic config names, as Kafka spells them.
const (
	ConfigRetentionMs              = "retention.ms"
	ConfigRetentionBytes           = "retention.bytes"
	ConfigSegmentBytes             = "segment.bytes"
	ConfigSegmentMs                = "segment.ms"
	ConfigCleanupPolicy            = "cleanup.policy"
	ConfigMaxMessageBytes          = "max.message.bytes"
	ConfigMinInsyncReplicas        = "min.insync.replicas"
	ConfigFlushMessages            = "flush.messages"
	ConfigFlushMs                  = "flush.ms"
	ConfigMessageTimestampType     = "message.timestamp.type"
	ConfigUncleanLeaderElection    = "unclean.leader.election.enable"
	ConfigDeleteRetentionMs        = "delete.retention.ms"
	ConfigMinCompactionLagMs       = "min.compaction.lag.ms"
	ConfigMinCleanableDirtyRatio   = "min.cleanable.dirty.ratio"
	ConfigIndexIntervalBytes       = "index.interval.bytes"
	ConfigCompressionType          = "compression.type"
	ConfigMessageTimestampBeforeMs = "message.timestamp.before.max.ms"
	ConfigMessageTimestampAfterMs  = "message.timestamp.after.max.ms"
	ConfigMaxCompactionLagMs       = "max.compaction.lag.ms"
	ConfigSegmentJitterMs          = "segment.jitter.ms"
	ConfigSegmentIndexBytes        = "segment.index.bytes"
	ConfigFileDeleteDelayMs        = "file.delete.delay.ms"
	ConfigPreallocate              = "preallocate"

	ConfigMessageTimestampDifferenceMs = "message.timestamp.difference.max.ms"
	ConfigMessageDownconversion        = "message.downconversion.enable"
	ConfigRemoteStorage                = "remote.storage.enable"
	ConfigLocalRetentionMs             = "local.retention.ms"
	ConfigLocalRetentionBytes          = "local.retention.bytes"
	ConfigCompressionGzipLevel         = "compression.gzip.level"
	ConfigCompressionLz4Level          = "compression.lz4.level"
	ConfigCompressionZstdLevel         = "compression.zstd.level"
)

// maxMessageBytesLimit bounds max.message.bytes: a batch is held in memory
// whole while it is validated and appended.
const maxMessageBytesLimit = 64 << 20

var topicConfigDefinitions = []TopicConfigDefinition{
	{Name: ConfigRetentionMs, Default: strconv.FormatInt((7 * 24 * time.Hour).Milliseconds(), 10),
		Doc: "How long to keep a segment after its newest record, in milliseconds; -1 keeps forever.", validate: atLeast(-1)},
	{Name: ConfigRetentionBytes, Default: "-1",
		Doc: "The most bytes a partition keeps before deleting its oldest segments; -1 is unlimited.", validate: atLeast(-1)},
	{Name: ConfigSegmentBytes, Default: strconv.Itoa(1 << 30),
		Doc: "Roll to a new segment file at this size.", validate: between(corelog.SegmentBytesMin, corelog.SegmentBytesMax)},
	{Name: ConfigSegmentJitterMs, Default: "0",
		Doc: "Roll each segment up to this much earlier than segment.ms, by a random amount drawn per segment, in milliseconds.", validate: atLeast(0)},
	{Name: ConfigSegmentIndexBytes, Default: strconv.Itoa(10 << 20),
		Doc:      "Roll to a new segment file once its offset index (8 bytes an entry) or time index (12 bytes) would outgrow this.",
		validate: between(corelog.SegmentIndexBytesMin, math.MaxInt32)},
	{Name: ConfigSegmentMs, Default: strconv.FormatInt((7 * 24 * time.Hour).Milliseconds(), 10),
		Doc: "Roll to a new segment file when the active one is this old, in milliseconds.", validate: atLeast(1)},
	{Name: ConfigCleanupPolicy, Default: "delete",
		Doc: "delete (by retention), compact (keep the latest record per key), or both.", validate: cleanupPolicy},
	{Name: ConfigMaxMessageBytes, Default: strconv.Itoa(1048588),
		Doc: "The largest record batch the partition accepts.", validate: between(0, maxMessageBytesLimit)},
	{Name: ConfigMinInsyncReplicas, Default: "1",
		Doc: "With acks=all, the fewest in-sync replicas that must have a write before it is acknowledged.", validate: atLeast(1)},
	{Name: ConfigFlushMessages, Default: "1",
		Doc: "1 (Sluice's default): acknowledge acks=all writes only once fsynced. Larger: acknowledge from the page cache " +
			"and fsync after this many messages or flush.ms, as Kafka does by default.", validate: atLeast(1)},
	{Name: ConfigFlushMs, Default: "9223372036854775807",
		Doc: "In page-cache mode, fsync at least this often, in milliseconds.", validate: atLeast(0)},
	{Name: ConfigMessageTimestampType, Default: "CreateTime",
		Doc: "CreateTime keeps the producer's timestamps; LogAppendTime stamps the broker's clock.", validate: oneOf("CreateTime", "LogAppendTime")},
	{Name: ConfigUncleanLeaderElection, Default: "false",
		Doc: "Allow a replica outside the ISR to become leader when no ISR member is left, at the price of lost writes.", validate: oneOf("true", "false")},
	{Name: ConfigDeleteRetentionMs, Default: strconv.FormatInt((24 * time.Hour).Milliseconds(), 10),
		Doc: "On compacted topics, how long tombstones stay readable after compaction reaches them.", validate: atLeast(0)},
	{Name: ConfigMinCompactionLagMs, Default: "0",
		Doc: "On compacted topics, the least time a record stays uncompacted.", validate: atLeast(0)},
	{Name: ConfigMinCleanableDirtyRatio, Default: "0.5",
		Doc: "On compacted topics, the share of uncompacted log that triggers compaction.", validate: ratio},
	{Name: ConfigMaxCompactionLagMs, Default: "9223372036854775807",
		Doc: "On compacted topics, the longest a record stays uncompacted: compaction runs, whatever min.cleanable.dirty.ratio says, " +
			"once a segment not yet compacted is this old, and segments roll at least this often.", validate: atLeast(1)},
	{Name: ConfigFileDeleteDelayMs, Default: "60000",
		Doc: "Accepted for Kafka's tools; Sluice removes a deleted segment's files at once, since no read can still hold them.", validate: atLeast(0)},
	{Name: ConfigPreallocate, Default: "false",
		Doc: "Accepted for Kafka's tools; Sluice never preallocates segment files.", validate: oneOf("true", "false")},
	{Name: ConfigMessageTimestampDifferenceMs, Default: "9223372036854775807",
		Doc: "Kafka 3.x's bound on a batch's timestamp either side of the broker's clock, in milliseconds (CreateTime topics); " +
			"message.timestamp.before.max.ms and after.max.ms take it while they are at their default.", validate: atLeast(0)},
	{Name: ConfigMessageDownconversion, Default: "true",
		Doc: "Accepted for Kafka's tools; Sluice serves no Fetch old enough to need records converted down.", validate: oneOf("true", "false")},
	{Name: ConfigRemoteStorage, Default: "false",
		Doc: "Tiered storage; Sluice has none, so only false is accepted.", validate: noTieredStorage},
	{Name: ConfigLocalRetentionMs, Default: "-2",
		Doc: "Tiered storage's local retention; without tiered storage it changes nothing (-2: retention.ms).", validate: atLeast(-2)},
	{Name: ConfigLocalRetentionBytes, Default: "-2",
		Doc: "Tiered storage's local retention; without tiered storage it changes nothing (-2: retention.bytes).", validate: atLeast(-2)},
	{Name: ConfigCompressionGzipLevel, Default: "-1",
		Doc: "Accepted for Kafka's tools; a batch rewritten for compression.type uses gzip's default level.", validate: gzipLevel},
	{Name: ConfigCompressionLz4Level, Default: "9",
		Doc: "Accepted for Kafka's tools; a batch rewritten for compression.type uses lz4's default level.", validate: between(1, 17)},
	{Name: ConfigCompressionZstdLevel, Default: "3",
		Doc: "Accepted for Kafka's tools; a batch rewritten for compression.type uses zstd's default level.", validate: between(-131072, 22)},
	{Name: ConfigIndexIntervalBytes, Default: "4096",
		Doc: "Bytes between offset index entries.", validate: between(0, 1<<30)},
	{Name: ConfigCompressionType, Default: "producer",
		Doc: "The codec the leader writes every produced batch in (uncompressed, gzip, snappy, lz4, zstd), recompressing one " +
			"produced otherwise; producer (the default) stores batches as produced.",
		validate: oneOf("producer", "uncompressed", "gzip", "snappy", "lz4", "zstd")},
	{Name: ConfigMessageTimestampBeforeMs, Default: "9223372036854775807",
		Doc: "Reject batches whose timestamp is further than this in the past (CreateTime topics).", validate: atLeast(0)},
	{Name: ConfigMessageTimestampAfterMs, Default: "9223372036854775807",
		Doc: "Reject batches whose timestamp is further than this in the future (CreateTime topics).", validate: atLeast(0)},
}

// TopicConfigDefinitions lists the topic configs Sluice takes, sorted by
// name.
func TopicConfigDefinitions() []TopicConfigDefinition {
	return append([]TopicConfigDefinition(nil), sortedTopicConfigDefinitions...)
}

// sortedTopicConfigDefinitions is topicConfigDefinitions sorted by name,
// once: a topic's effective configs are listed on every CreateTopics
// answer.
var sortedTopicConfigDefinitions = func() []TopicConfigDefinition {
	defs := append([]TopicConfigDefinition(nil), topicConfigDefinitions...)
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	return defs
}()

// LookupTopicConfig finds a topic config's definition.
func LookupTopicConfig(name string) (TopicConfigDefinition, bool) {
	for _, d := range topicConfigDefinitions {
		if d.Name == name {
			return d, true
		}
	}
	return TopicConfigDefinition{}, false
}

// CompressionTypeCodec is the codec a compression.type value asks every
// batch to be written in: false for "producer", which keeps each batch's
// own. Kafka calls no compression "uncompressed" here, not "none".
func CompressionTypeCodec(value string) (codec int, ok bool) {
	switch value {
	case "uncompressed":
		return batch.CompressionNone, true
	case "gzip", "snappy", "lz4", "zstd":
		return batch.CodecNamed(value)
	}
	return 0, false
}

// noTieredStorage refuses remote.storage.enable=true as Kafka refuses it
// on a cluster without tiered storage.
func noTieredStorage(s string) error {
	switch s {
	case "false":
		return nil
	case "true":
		return fmt.Errorf("Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.")
	}
	return fmt.Errorf("must be true or false")
}

// gzipLevel is Kafka's range for compression.gzip.level: -1 (the codec's
// default) or 1 to 9.
func gzipLevel(s string) error {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return fmt.Errorf("not an integer")
	}
	if v != -1 && (v < 1 || v > 9) {
		return fmt.Errorf("must be -1 or between 1 and 9")
	}
	return nil
}

func atLeast(low int64) func(string) error {
	return func(s string) error {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("not an integer")
		}
		if v < low {
			return fmt.Errorf("must be at least %d", low)
		}
		return nil
	}
}

func between(low, high int64) func(string) error {
	return func(s string) error {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("not an integer")
		}
		if v < low || v > high {
			return fmt.Errorf("must be between %d and %d", low, high)
		}
		return nil
	}
}

func oneOf(values ...string) func(string) error {
	return func(s string) error {
		for _, v := range values {
			if s == v {
				return nil
			}
		}
		return fmt.Errorf("must be one of %s", strings.Join(values, ", "))
	}
}

func cleanupPolicy(s string) error {
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part != "delete" && part != "compact" {
			return fmt.Errorf("policies are delete and compact")
		}
		if seen[part] {
			return fmt.Errorf("%s given twice", part)
		}
		seen[part] = true
	}
	return nil
}

func ratio(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || v > 1 {
		return fmt.Errorf("must be a number between 0 and 1")
	}
	return nil
}

// isBooleanConfig reports whether a topic config is a boolean.
func isBooleanConfig(name string) bool {
	switch name {
	case ConfigUncleanLeaderElection, ConfigPreallocate, ConfigMessageDownconversion, ConfigRemoteStorage:
		return true
	}
	return false
}

// NormalizeTopicConfigValue is a topic config's value as Kafka's ConfigDef
// parses it: trimmed of surrounding spaces, and a boolean in any case
// ("TRUE") as its lower-case form. Values are validated and stored
// normalized, so the rest of Sluice reads "true" whatever was written.
func NormalizeTopicConfigValue(name, value string) string {
	value = strings.TrimSpace(value)
	if isBooleanConfig(name) && (strings.EqualFold(value, "true") || strings.EqualFold(value, "false")) {
		return strings.ToLower(value)
	}
	return value
}
