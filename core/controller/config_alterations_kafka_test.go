package controller

// Config alterations as Kafka's controller judges them; each test failed
// before its fix (a review against Kafka's ConfigurationControlManager).

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

// Kafka deletes a key no topic holds without looking at its name; tools
// clear configs Sluice does not have this way.
func TestIncrementalDeleteOfAConfigSluiceLacksSucceeds(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	tc.mustCreate("t", 1, 1)
	const del = kmsg.IncrementalAlterConfigOpDelete
	for _, name := range []string{"max.compaction.lag.ms", "segment.jitter.ms", "preallocate"} {
		resp := tc.incrementalAlter(false, incremental(kmsg.ConfigResourceTypeTopic, "t", name, del, "<nil>"))
		requireCode(t, "DELETE "+name, resp.Resources[0].ErrorCode, resp.Resources[0].ErrorMessage, nil)
	}
}

// The default topic resource ("") is no topic, and a name no topic could
// have is invalid, whether or not such a topic exists.
func TestAlterConfigsJudgesTheTopicNameFirst(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	const set = kmsg.IncrementalAlterConfigOpSet
	resp := tc.incrementalAlter(false,
		incremental(kmsg.ConfigResourceTypeTopic, "", metadata.ConfigRetentionMs, set, "1000"),
		incremental(kmsg.ConfigResourceTypeTopic, "bad/name", metadata.ConfigRetentionMs, set, "1000"))
	requireCode(t, "empty name", resp.Resources[0].ErrorCode, resp.Resources[0].ErrorMessage, kerr.InvalidRequest)
	requireCode(t, "illegal name", resp.Resources[1].ErrorCode, resp.Resources[1].ErrorMessage, kerr.InvalidTopicException)
}

// Kafka's ConfigDef trims a value and takes a boolean in any case; the
// value is kept as Sluice reads it, "true", whatever was written.
func TestConfigValuesAreTrimmedAndBooleansTakenInAnyCase(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	resp := tc.createTopics(false, topicRequest("spaced", 1, 1, metadata.ConfigRetentionMs, " 1000 ", metadata.ConfigUncleanLeaderElection, "TRUE"))
	requireCode(t, "create", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, nil)
	configs := tc.c.Image().TopicConfigs("spaced")
	if configs[metadata.ConfigRetentionMs] != "1000" || configs[metadata.ConfigUncleanLeaderElection] != "true" {
		t.Fatalf("stored configs %v, want retention.ms 1000 and unclean.leader.election.enable true", configs)
	}
	const set = kmsg.IncrementalAlterConfigOpSet
	alter := tc.incrementalAlter(false, incremental(kmsg.ConfigResourceTypeTopic, "spaced", metadata.ConfigUncleanLeaderElection, set, " False"))
	requireCode(t, "alter", alter.Resources[0].ErrorCode, alter.Resources[0].ErrorMessage, nil)
	if got := tc.c.Image().TopicConfigs("spaced")[metadata.ConfigUncleanLeaderElection]; got != "false" {
		t.Fatalf("unclean.leader.election.enable is %q after setting \" False\", want false", got)
	}
	bad := tc.incrementalAlter(false, incremental(kmsg.ConfigResourceTypeTopic, "spaced", metadata.ConfigUncleanLeaderElection, set, "yes"))
	requireCode(t, "not a boolean", bad.Resources[0].ErrorCode, bad.Resources[0].ErrorMessage, kerr.InvalidConfig)
}
