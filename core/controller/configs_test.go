package controller

import (
	"maps"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

const (
	set      = kmsg.IncrementalAlterConfigOpSet
	remove   = kmsg.IncrementalAlterConfigOpDelete
	appendTo = kmsg.IncrementalAlterConfigOpAppend
	subtract = kmsg.IncrementalAlterConfigOpSubtract
	topic    = kmsg.ConfigResourceTypeTopic
	broker   = kmsg.ConfigResourceTypeBroker
)

func requireConfigs(t *testing.T, tc *testController, name string, want map[string]string) {
	t.Helper()
	if got := tc.c.Image().TopicConfigs(name); !maps.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("configs of %s: %v, want %v", name, got, want)
	}
}

func TestIncrementalAlterConfigsOperations(t *testing.T) {
	tc := newTestController(t, Config{TopicDefaults: map[string]string{metadata.ConfigCleanupPolicy: "delete"}}, 1)
	tc.mustCreate("t", 1, 1, metadata.ConfigRetentionMs, "100", metadata.ConfigMaxMessageBytes, "2000")

	resp := tc.incrementalAlter(false, incremental(topic, "t",
		metadata.ConfigRetentionMs, set, "200",
		metadata.ConfigMaxMessageBytes, remove, "<nil>",
		metadata.ConfigCleanupPolicy, appendTo, "compact",
		metadata.ConfigSegmentMs, remove, "<nil>", // not set: nothing to delete
	))
	requireCode(t, "alter", resp.Resources[0].ErrorCode, resp.Resources[0].ErrorMessage, nil)
	if resp.Resources[0].ResourceName != "t" || resp.Resources[0].ResourceType != topic {
		t.Fatalf("answer names %+v", resp.Resources[0])
	}
	// APPEND starts from the value in force, the broker's "delete".
	requireConfigs(t, tc, "t", map[string]string{metadata.ConfigRetentionMs: "200", metadata.ConfigCleanupPolicy: "delete,compact"})

	// Appending what is there changes nothing; subtracting removes it.
	proposals := tc.proposer.changes()
	resp = tc.incrementalAlter(false, incremental(topic, "t", metadata.ConfigCleanupPolicy, appendTo, "compact"))
	requireCode(t, "append again", resp.Resources[0].ErrorCode, resp.Resources[0].ErrorMessage, nil)
	if tc.proposer.changes() != proposals {
		t.Fatal("a change to nothing proposed records")
	}
	resp = tc.incrementalAlter(false, incremental(topic, "t", metadata.ConfigCleanupPolicy, subtract, "delete"))
	requireCode(t, "subtract", resp.Resources[0].ErrorCode, resp.Resources[0].ErrorMessage, nil)
	requireConfigs(t, tc, "t", map[string]string{metadata.ConfigRetentionMs: "200", metadata.ConfigCleanupPolicy: "compact"})
}

func TestIncrementalAlterConfigsRefusals(t *testing.T) {
	for _, tt := range []struct {
		name     string
		resource kmsg.IncrementalAlterConfigsRequestResource
		want     *kerr.Error
	}{
		{"unknown topic", incremental(topic, "missing", metadata.ConfigRetentionMs, set, "1"), kerr.UnknownTopicOrPartition},
		{"unknown config", incremental(topic, "t", "retention.hours", set, "1"), kerr.InvalidConfig},
		{"invalid value", incremental(topic, "t", metadata.ConfigRetentionMs, set, "-5"), kerr.InvalidConfig},
		{"null set", incremental(topic, "t", metadata.ConfigRetentionMs, set, "<nil>"), kerr.InvalidRequest},
		{"append to a number", incremental(topic, "t", metadata.ConfigRetentionMs, appendTo, "1"), kerr.InvalidConfig},
		{"subtract from a number", incremental(topic, "t", metadata.ConfigRetentionMs, subtract, "1"), kerr.InvalidConfig},
		{"append a bad item", incremental(topic, "t", metadata.ConfigCleanupPolicy, appendTo, "forever"), kerr.InvalidConfig},
		{"subtract everything", incremental(topic, "t", metadata.ConfigCleanupPolicy, subtract, "delete"), kerr.InvalidConfig},
		{"unknown operation", incremental(topic, "t", metadata.ConfigRetentionMs, kmsg.IncrementalAlterConfigOp(9), "1"), kerr.InvalidRequest},
		{"config twice", incremental(topic, "t", metadata.ConfigRetentionMs, set, "1", metadata.ConfigRetentionMs, remove, "<nil>"), kerr.InvalidRequest},
		{"broker config", incremental(broker, "1", "log.retention.ms", set, "1"), kerr.InvalidRequest},
		{"unknown resource type", incremental(kmsg.ConfigResourceTypeBrokerLogger, "1", "x", set, "1"), kerr.InvalidRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestController(t, Config{}, 1)
			tc.mustCreate("t", 1, 1, metadata.ConfigRetentionMs, "100")
			proposals := tc.proposer.changes()
			resp := tc.incrementalAlter(false, tt.resource)
			requireCode(t, tt.name, resp.Resources[0].ErrorCode, resp.Resources[0].ErrorMessage, tt.want)
			if tc.proposer.changes() != proposals {
				t.Fatal("a refused change proposed records")
			}
			requireConfigs(t, tc, "t", map[string]string{metadata.ConfigRetentionMs: "100"})
		})
	}
}

func TestIncrementalAlterConfigsJudgesEachResource(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	tc.mustCreate("a", 1, 1)
	tc.mustCreate("b", 1, 1)
	resp := tc.incrementalAlter(false,
		incremental(topic, "a", metadata.ConfigRetentionMs, set, "1"),
		incremental(topic, "b", metadata.ConfigRetentionMs, set, "x"),
		incremental(broker, "1"), // changes nothing: accepted
		incremental(topic, "dup", metadata.ConfigRetentionMs, set, "1"),
		incremental(topic, "dup", metadata.ConfigRetentionMs, set, "1"),
	)
	want := []*kerr.Error{nil, kerr.InvalidConfig, nil, kerr.InvalidRequest, kerr.InvalidRequest}
	for i, w := range want {
		requireCode(t, resp.Resources[i].ResourceName, resp.Resources[i].ErrorCode, resp.Resources[i].ErrorMessage, w)
	}
	requireConfigs(t, tc, "a", map[string]string{metadata.ConfigRetentionMs: "1"})
	requireConfigs(t, tc, "b", nil)
}

func TestIncrementalAlterConfigsValidateOnly(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	tc.mustCreate("t", 1, 1)
	resp := tc.incrementalAlter(true, incremental(topic, "t", metadata.ConfigRetentionMs, set, "1"))
	requireCode(t, "validate", resp.Resources[0].ErrorCode, resp.Resources[0].ErrorMessage, nil)
	resp = tc.incrementalAlter(true, incremental(topic, "t", metadata.ConfigRetentionMs, set, "x"))
	requireCode(t, "validate bad", resp.Resources[0].ErrorCode, resp.Resources[0].ErrorMessage, kerr.InvalidConfig)
	requireConfigs(t, tc, "t", nil)
}

func TestAlterConfigsReplacesTheWholeSet(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	tc.mustCreate("t", 1, 1, metadata.ConfigRetentionMs, "100", metadata.ConfigMaxMessageBytes, "2000")
	before := tc.proposer.nextOffset
	resp := tc.alter(false, legacy(topic, "t", metadata.ConfigRetentionMs, "100", metadata.ConfigSegmentMs, "60000"))
	requireCode(t, "alter", resp.Resources[0].ErrorCode, resp.Resources[0].ErrorMessage, nil)
	requireConfigs(t, tc, "t", map[string]string{metadata.ConfigRetentionMs: "100", metadata.ConfigSegmentMs: "60000"})
	// Only the changes are written: max.message.bytes removed and
	// segment.ms added; retention.ms is unchanged.
	last := tc.proposer.proposals[len(tc.proposer.proposals)-1]
	if tc.proposer.nextOffset-before != 2 || len(last) != 2 ||
		last[0].Config.Name != metadata.ConfigMaxMessageBytes || last[0].Config.Value != nil ||
		last[1].Config.Name != metadata.ConfigSegmentMs || *last[1].Config.Value != "60000" {
		t.Fatalf("records %+v", last)
	}
	resp = tc.alter(false, legacy(topic, "t"))
	requireCode(t, "clear", resp.Resources[0].ErrorCode, resp.Resources[0].ErrorMessage, nil)
	requireConfigs(t, tc, "t", nil)
}

func TestAlterConfigsRefusals(t *testing.T) {
	nullValue := legacy(topic, "t")
	nullValue.Configs = append(nullValue.Configs, kmsg.AlterConfigsRequestResourceConfig{Name: metadata.ConfigRetentionMs})
	for _, tt := range []struct {
		name     string
		resource kmsg.AlterConfigsRequestResource
		want     *kerr.Error
	}{
		{"unknown topic", legacy(topic, "missing", metadata.ConfigRetentionMs, "1"), kerr.UnknownTopicOrPartition},
		{"unknown config", legacy(topic, "t", "retention.hours", "1"), kerr.InvalidConfig},
		{"invalid value", legacy(topic, "t", metadata.ConfigMessageTimestampType, "Yesterday"), kerr.InvalidConfig},
		{"null value", nullValue, kerr.InvalidRequest},
		{"config twice", legacy(topic, "t", metadata.ConfigRetentionMs, "1", metadata.ConfigRetentionMs, "2"), kerr.InvalidRequest},
		{"broker config", legacy(broker, "", "num.partitions", "3"), kerr.InvalidRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestController(t, Config{}, 1)
			tc.mustCreate("t", 1, 1, metadata.ConfigRetentionMs, "100")
			resp := tc.alter(false, tt.resource)
			requireCode(t, tt.name, resp.Resources[0].ErrorCode, resp.Resources[0].ErrorMessage, tt.want)
			requireConfigs(t, tc, "t", map[string]string{metadata.ConfigRetentionMs: "100"})
		})
	}
}

// TestCompactionLagsMustNotCross: each lag passes its own check, but
// min.compaction.lag.ms above max.compaction.lag.ms is refused with
// INVALID_CONFIG, at creation and on alteration (against the value in
// force), as Kafka's LogConfig.validateValues refuses it.
func TestCompactionLagsMustNotCross(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	resp := tc.createTopics(false, topicRequest("crossed", 1, 1,
		metadata.ConfigMinCompactionLagMs, "2000", metadata.ConfigMaxCompactionLagMs, "1000"))
	requireCode(t, "create with crossed lags", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, kerr.InvalidConfig)
	if _, exists := tc.c.Image().Topics["crossed"]; exists {
		t.Fatal("a topic with crossed lags was created")
	}

	tc.mustCreate("t", 1, 1, metadata.ConfigMaxCompactionLagMs, "1000")
	proposals := tc.proposer.changes()
	alter := tc.incrementalAlter(false, incremental(topic, "t", metadata.ConfigMinCompactionLagMs, set, "1001"))
	requireCode(t, "min above the max in force", alter.Resources[0].ErrorCode, alter.Resources[0].ErrorMessage, kerr.InvalidConfig)
	if tc.proposer.changes() != proposals {
		t.Fatal("a refused change proposed records")
	}
	alter = tc.incrementalAlter(false, incremental(topic, "t", metadata.ConfigMinCompactionLagMs, set, "1000"))
	requireCode(t, "min equal to the max", alter.Resources[0].ErrorCode, alter.Resources[0].ErrorMessage, nil)
	requireConfigs(t, tc, "t", map[string]string{metadata.ConfigMinCompactionLagMs: "1000", metadata.ConfigMaxCompactionLagMs: "1000"})
}

// TestKafkasTopicConfigsAreAccepted: every topic config a Kafka 3.x or 4.x
// topic may set, at a value Kafka takes, creates the topic (Terraform and
// Strimzi send whole sets of them), except remote.storage.enable=true,
// which Kafka without tiered storage refuses too.
func TestKafkasTopicConfigsAreAccepted(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	configs := []string{
		"cleanup.policy", "compact,delete", "compression.type", "producer",
		"compression.gzip.level", "9", "compression.lz4.level", "17", "compression.zstd.level", "-5",
		"delete.retention.ms", "1000", "file.delete.delay.ms", "0", "flush.messages", "1", "flush.ms", "1000",
		"index.interval.bytes", "4096", "local.retention.bytes", "-2", "local.retention.ms", "-2",
		"max.compaction.lag.ms", "86400000", "max.message.bytes", "1048588",
		"message.downconversion.enable", "FALSE", "message.timestamp.after.max.ms", "3600000",
		"message.timestamp.before.max.ms", "3600000", "message.timestamp.difference.max.ms", "3600000",
		"message.timestamp.type", "CreateTime", "min.cleanable.dirty.ratio", "0.5", "min.compaction.lag.ms", "0",
		"min.insync.replicas", "1", "preallocate", "false", "remote.storage.enable", "false",
		"retention.bytes", "-1", "retention.ms", "604800000", "segment.bytes", "2147483647",
		"segment.index.bytes", "10485760", "segment.jitter.ms", "0", "segment.ms", "604800000",
		"unclean.leader.election.enable", "false"}
	tc.mustCreate("full", 1, 1, configs...)
	got := tc.c.Image().TopicConfigs("full")
	if len(got) != len(configs)/2 || got[metadata.ConfigMessageDownconversion] != "false" {
		t.Fatalf("the topic holds %d configs (want %d), message.downconversion.enable=%q (want false): %v",
			len(got), len(configs)/2, got[metadata.ConfigMessageDownconversion], got)
	}

	resp := tc.createTopics(false, topicRequest("tiered", 1, 1, metadata.ConfigRemoteStorage, "true"))
	requireCode(t, "remote.storage.enable=true", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, kerr.InvalidConfig)
}
