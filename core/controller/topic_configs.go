package controller

import (
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

// TopicConfigValue is one topic config as a client sees it: the value in
// force and where it comes from.
type TopicConfigValue struct {
	Definition metadata.TopicConfigDefinition
	Value      string
	// Source is DYNAMIC_TOPIC_CONFIG for a value the topic sets itself,
	// STATIC_BROKER_CONFIG for the broker's override of the default
	// (Config.TopicDefaults, from its configuration file), and
	// DEFAULT_CONFIG for Kafka's default.
	Source kmsg.ConfigSource
}

// EffectiveTopicConfigs lists every topic config Sluice takes, sorted by
// name, with the value in force for a topic whose explicit configs are
// explicit on a broker whose overrides are brokerDefaults. CreateTopics
// answers and DescribeConfigs both report it.
func EffectiveTopicConfigs(explicit, brokerDefaults map[string]string) []TopicConfigValue {
	definitions := metadata.TopicConfigDefinitions()
	values := make([]TopicConfigValue, 0, len(definitions))
	for _, definition := range definitions {
		value := TopicConfigValue{Definition: definition, Value: definition.Default, Source: kmsg.ConfigSourceDefaultConfig}
		if v, ok := brokerDefaults[definition.Name]; ok {
			value.Value, value.Source = v, kmsg.ConfigSourceStaticBrokerConfig
		}
		if v, ok := explicit[definition.Name]; ok {
			value.Value, value.Source = v, kmsg.ConfigSourceDynamicTopicConfig
		}
		values = append(values, value)
	}
	return values
}

// effectiveTopicConfig is the value in force for one config.
func effectiveTopicConfig(name string, explicit, brokerDefaults map[string]string) string {
	if v, ok := explicit[name]; ok {
		return v
	}
	if v, ok := brokerDefaults[name]; ok {
		return v
	}
	definition, known := metadata.LookupTopicConfig(name)
	if !known {
		violated("no definition for topic config %q", name)
	}
	return definition.Default
}

// checkTopicConfigCombination refuses topic configs that each pass their
// own check but not together, as Kafka's LogConfig.validateValues does:
// min.compaction.lag.ms above max.compaction.lag.ms.
func checkTopicConfigCombination(explicit, brokerDefaults map[string]string) *failure {
	minLag := effectiveTopicConfig(metadata.ConfigMinCompactionLagMs, explicit, brokerDefaults)
	maxLag := effectiveTopicConfig(metadata.ConfigMaxCompactionLagMs, explicit, brokerDefaults)
	low, errLow := strconv.ParseInt(minLag, 10, 64)
	high, errHigh := strconv.ParseInt(maxLag, 10, 64)
	if errLow == nil && errHigh == nil && low > high {
		return fail(kerr.InvalidConfig, "conflict topic config setting %s (%d) > %s (%d)",
			metadata.ConfigMinCompactionLagMs, low, metadata.ConfigMaxCompactionLagMs, high)
	}
	return nil
}

// topicConfigTypes are the types Kafka declares for these configs, which
// DescribeConfigs v3+ reports and which decide what APPEND and SUBTRACT
// may change (lists only).
var topicConfigTypes = map[string]kmsg.ConfigType{
	metadata.ConfigRetentionMs:              kmsg.ConfigTypeLong,
	metadata.ConfigRetentionBytes:           kmsg.ConfigTypeLong,
	metadata.ConfigSegmentBytes:             kmsg.ConfigTypeInt,
	metadata.ConfigSegmentMs:                kmsg.ConfigTypeLong,
	metadata.ConfigCleanupPolicy:            kmsg.ConfigTypeList,
	metadata.ConfigMaxMessageBytes:          kmsg.ConfigTypeInt,
	metadata.ConfigMinInsyncReplicas:        kmsg.ConfigTypeInt,
	metadata.ConfigFlushMessages:            kmsg.ConfigTypeLong,
	metadata.ConfigFlushMs:                  kmsg.ConfigTypeLong,
	metadata.ConfigMessageTimestampType:     kmsg.ConfigTypeString,
	metadata.ConfigUncleanLeaderElection:    kmsg.ConfigTypeBoolean,
	metadata.ConfigDeleteRetentionMs:        kmsg.ConfigTypeLong,
	metadata.ConfigMinCompactionLagMs:       kmsg.ConfigTypeLong,
	metadata.ConfigMinCleanableDirtyRatio:   kmsg.ConfigTypeDouble,
	metadata.ConfigIndexIntervalBytes:       kmsg.ConfigTypeInt,
	metadata.ConfigCompressionType:          kmsg.ConfigTypeString,
	metadata.ConfigMessageTimestampBeforeMs: kmsg.ConfigTypeLong,
	metadata.ConfigMessageTimestampAfterMs:  kmsg.ConfigTypeLong,
	metadata.ConfigMaxCompactionLagMs:       kmsg.ConfigTypeLong,
	metadata.ConfigSegmentJitterMs:          kmsg.ConfigTypeLong,
	metadata.ConfigSegmentIndexBytes:        kmsg.ConfigTypeInt,
	metadata.ConfigFileDeleteDelayMs:        kmsg.ConfigTypeLong,
	metadata.ConfigPreallocate:              kmsg.ConfigTypeBoolean,

	metadata.ConfigMessageTimestampDifferenceMs: kmsg.ConfigTypeLong,
	metadata.ConfigMessageDownconversion:        kmsg.ConfigTypeBoolean,
	metadata.ConfigRemoteStorage:                kmsg.ConfigTypeBoolean,
	metadata.ConfigLocalRetentionMs:             kmsg.ConfigTypeLong,
	metadata.ConfigLocalRetentionBytes:          kmsg.ConfigTypeLong,
	metadata.ConfigCompressionGzipLevel:         kmsg.ConfigTypeInt,
	metadata.ConfigCompressionLz4Level:          kmsg.ConfigTypeInt,
	metadata.ConfigCompressionZstdLevel:         kmsg.ConfigTypeInt,
}

// TopicConfigType is the type Kafka declares for a topic config,
// ConfigTypeUnknown for a name Sluice does not know.
func TopicConfigType(name string) kmsg.ConfigType {
	if t, ok := topicConfigTypes[name]; ok {
		return t
	}
	return kmsg.ConfigTypeUnknown
}

func init() {
	// Every config Sluice takes has a type, so a new definition without
	// one fails at start instead of describing itself as UNKNOWN.
	for _, definition := range metadata.TopicConfigDefinitions() {
		_, typed := topicConfigTypes[definition.Name]
		assert(typed, "topic config %q has no type in topicConfigTypes", definition.Name)
	}
}

// sortedKeys lists a map's keys in order, so that nothing built from a map
// depends on Go's randomized iteration.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}
