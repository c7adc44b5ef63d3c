package node

import (
	"maps"
	"strings"
	"testing"
	"time"

	"sluice/core/broker"
	"sluice/core/metadata"
)

func TestParseVoters(t *testing.T) {
	voters, err := ParseVoters("1@127.0.0.1:9093, 2@127.0.0.1:9095,3@host:9097")
	if err != nil {
		t.Fatal(err)
	}
	want := map[int32]string{1: "127.0.0.1:9093", 2: "127.0.0.1:9095", 3: "host:9097"}
	if !maps.Equal(voters, want) {
		t.Fatalf("voters %v, want %v", voters, want)
	}
	for _, bad := range []string{"", "1", "x@h:1", "-1@h:1", "1@h", "1@h:1,1@h:2"} {
		if _, err := ParseVoters(bad); err == nil {
			t.Errorf("ParseVoters(%q) accepted", bad)
		}
	}
}

func TestParseRoles(t *testing.T) {
	for text, want := range map[string]broker.Roles{
		"broker":             {Broker: true},
		"controller":         {Controller: true},
		"broker,controller":  {Broker: true, Controller: true},
		"controller, broker": {Broker: true, Controller: true},
	} {
		got, err := ParseRoles(text)
		if err != nil || got != want {
			t.Errorf("ParseRoles(%q) = %+v, %v; want %+v", text, got, err, want)
		}
	}
	if _, err := ParseRoles("broker,zookeeper"); err == nil {
		t.Error("an unknown role was accepted")
	}
}

func TestKafkaClusterSettings(t *testing.T) {
	c := DefaultConfig()
	for key, value := range map[string]string{
		"node.id":                               "2",
		"process.roles":                         "broker,controller",
		"listeners":                             "PLAINTEXT://127.0.0.1:9094,CONTROLLER://127.0.0.1:9095",
		"controller.listener.names":             "CONTROLLER",
		"controller.quorum.voters":              "1@127.0.0.1:9093,2@127.0.0.1:9095,3@127.0.0.1:9097",
		"broker.session.timeout.ms":             "6000",
		"broker.heartbeat.interval.ms":          "1000",
		"controller.quorum.election.timeout.ms": "500",
		"controller.quorum.fetch.timeout.ms":    "1500",
		"controller.quorum.request.timeout.ms":  "1200",
	} {
		if err := c.Set(key, value); err != nil {
			t.Fatalf("%s=%s: %v", key, value, err)
		}
	}
	if err := c.resolve(); err != nil {
		t.Fatal(err)
	}
	switch {
	case c.Listen != "127.0.0.1:9094" || c.ControllerListen != "127.0.0.1:9095":
		t.Fatalf("listeners %q and %q", c.Listen, c.ControllerListen)
	case c.Broker.ControllerAddress != "127.0.0.1:9095" || len(c.Broker.Voters) != 3:
		t.Fatalf("controller address %q, voters %v", c.Broker.ControllerAddress, c.Broker.Voters)
	case c.Broker.SessionTimeout != 6*time.Second || c.Broker.HeartbeatInterval != time.Second ||
		c.Broker.ElectionTimeout != 500*time.Millisecond || c.Broker.FetchTimeout != 1500*time.Millisecond ||
		c.Broker.QuorumRequestTimeout != 1200*time.Millisecond:
		t.Fatalf("timeouts %+v", c.Broker)
	}
	if err := c.Set("controller.listener.names", "OTHER"); err == nil {
		t.Fatal("another controller listener name was accepted")
	}
}

// Leaders go back to their preferred replicas every 300 s by default, as
// in Kafka; the interval is set in seconds, and the whole thing can be
// switched off.
func TestAutoLeaderRebalanceSettings(t *testing.T) {
	c := DefaultConfig()
	if c.Broker.AutoLeaderRebalanceDisabled || c.Broker.LeaderImbalanceCheckInterval != 300*time.Second {
		t.Fatalf("defaults: disabled %v, every %v", c.Broker.AutoLeaderRebalanceDisabled, c.Broker.LeaderImbalanceCheckInterval)
	}
	if err := c.Set("leader.imbalance.check.interval.seconds", "30"); err != nil || c.Broker.LeaderImbalanceCheckInterval != 30*time.Second {
		t.Fatalf("interval: %v, %v", err, c.Broker.LeaderImbalanceCheckInterval)
	}
	if err := c.Set("auto.leader.rebalance.enable", "false"); err != nil || !c.Broker.AutoLeaderRebalanceDisabled {
		t.Fatalf("disable: %v, %v", err, c.Broker.AutoLeaderRebalanceDisabled)
	}
	for key, value := range map[string]string{"leader.imbalance.check.interval.seconds": "0", "auto.leader.rebalance.enable": "sometimes"} {
		if err := c.Set(key, value); err == nil {
			t.Errorf("%s=%s was accepted", key, value)
		}
	}
}

func TestVoterListensOnItsOwnEntryByDefault(t *testing.T) {
	c := DefaultConfig()
	c.Broker.NodeID = 3
	c.Listen = "127.0.0.1:9096"
	voters, err := ParseVoters("1@127.0.0.1:9093,2@127.0.0.1:9095,3@127.0.0.1:9097")
	if err != nil {
		t.Fatal(err)
	}
	c.Broker.Voters = voters
	if err := c.resolve(); err != nil {
		t.Fatal(err)
	}
	if c.ControllerListen != "127.0.0.1:9097" {
		t.Fatalf("controller listener %q, want the node's voter entry", c.ControllerListen)
	}
}

func TestControllerOutsideTheVotersIsRefused(t *testing.T) {
	c := DefaultConfig()
	c.Broker.NodeID = 4
	voters, err := ParseVoters("1@127.0.0.1:9093,2@127.0.0.1:9095")
	if err != nil {
		t.Fatal(err)
	}
	c.Broker.Voters = voters
	err = c.resolve()
	if err == nil || !strings.Contains(err.Error(), "not among the voters") {
		t.Fatalf("resolve: %v", err)
	}
}

func TestSingleNodeNeedsNoControllerListener(t *testing.T) {
	c := DefaultConfig()
	if err := c.resolve(); err != nil {
		t.Fatal(err)
	}
	if c.ControllerListen != "" || len(c.Broker.Voters) != 0 {
		t.Fatalf("a single node got controller listener %q and voters %v", c.ControllerListen, c.Broker.Voters)
	}
}

func TestGroupSettings(t *testing.T) {
	c := DefaultConfig()
	for key, value := range map[string]string{ // order-independent: each sets its own field
		"group.initial.rebalance.delay.ms": "0",
		"group.min.session.timeout.ms":     "1000",
		"offsets.topic.num.partitions":     "7",
		"offsets.retention.minutes":        "60",
		"offset.metadata.max.bytes":        "100",
	} {
		if err := c.Set(key, value); err != nil {
			t.Fatalf("%s=%s: %v", key, value, err)
		}
	}
	if c.Broker.GroupInitialRebalanceDelay != 0 || c.Broker.GroupMinSessionTimeout != time.Second ||
		c.Broker.OffsetsTopicPartitions != 7 || c.Broker.OffsetsRetention != time.Hour || c.Broker.OffsetMetadataMaxBytes != 100 {
		t.Fatalf("group settings not applied: %+v", c.Broker)
	}
	if err := c.Set("offsets.topic.num.partitions", "0"); err == nil {
		t.Fatal("0 offsets partitions accepted")
	}
}

// Each numeric setting is read into the width its field has, within the
// bounds Kafka gives it, and refused with the key and the kind of number
// beyond them: a replication factor of 40000 does not wrap to a negative
// int16.
func TestNumericSettingsKeepTheirBounds(t *testing.T) {
	c := DefaultConfig()
	for key, value := range map[string]string{
		"num.partitions":                   "12",
		"default.replication.factor":       "3",
		"offsets.topic.num.partitions":     "50",
		"offsets.topic.replication.factor": "3",
		"socket.request.max.bytes":         "1024",
		"max.connections":                  "10",
		"queued.max.request.bytes":         "1048576",
		"auto.create.topics.enable":        "false",
		"auto.leader.rebalance.enable":     "false",
	} {
		if err := c.Set(key, value); err != nil {
			t.Fatalf("%s=%s: %v", key, value, err)
		}
	}
	b := c.Broker
	if b.DefaultPartitions != 12 || b.DefaultReplicationFactor != 3 || b.OffsetsTopicPartitions != 50 || b.OffsetsTopicReplicationFactor != 3 ||
		c.Net.FrameBytesMax != 1024 || c.Net.ConnectionsMax != 10 || c.Net.QueuedBytesMax != 1<<20 || b.AutoCreateTopics || !b.AutoLeaderRebalanceDisabled {
		t.Fatalf("settings not applied: %+v %+v", b, c.Net)
	}
	for _, bad := range []struct{ key, value, says string }{
		{"default.replication.factor", "40000", "is not a replication factor"},
		{"default.replication.factor", "0", "is not a replication factor"},
		{"num.partitions", "3000000000", "is not a partition count"},
		{"socket.request.max.bytes", "1023", "is not a size of at least 1024"},
		{"node.id", "-1", "is not a node id"},
		{"max.connections", "many", "is not a count"},
		{"auto.create.topics.enable", "yes please", "is not true or false"},
	} {
		err := c.Set(bad.key, bad.value)
		if err == nil || !strings.Contains(err.Error(), bad.key) || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%s=%s: got %v, want an error that %s", bad.key, bad.value, err, bad.says)
		}
	}
}

// As Kafka's KafkaConfig.logRetentionTimeMillis reads them: a negative
// log.retention.hours or .minutes is unlimited, and log.retention.ms wins
// over .minutes, which wins over .hours, whatever their order (the stock
// server.properties has log.retention.hours=168).
func TestLogRetentionSettingsAsKafkaReadsThem(t *testing.T) {
	for _, c := range []struct {
		settings [][2]string
		want     string
	}{
		{[][2]string{{"log.retention.hours", "-1"}}, "-1"},
		{[][2]string{{"log.retention.minutes", "-5"}}, "-1"},
		{[][2]string{{"log.retention.hours", "2"}}, "7200000"},
		{[][2]string{{"log.retention.ms", "3600000"}, {"log.retention.hours", "168"}}, "3600000"},
		{[][2]string{{"log.retention.hours", "168"}, {"log.retention.ms", "3600000"}}, "3600000"},
		{[][2]string{{"log.retention.minutes", "10"}, {"log.retention.hours", "168"}}, "600000"},
		{[][2]string{{"log.retention.hours", "1"}, {"log.retention.hours", "3"}}, "10800000"},
	} {
		config := DefaultConfig()
		for _, kv := range c.settings {
			if err := config.Set(kv[0], kv[1]); err != nil {
				t.Fatalf("%v: %v", c.settings, err)
			}
		}
		if got := config.Broker.TopicDefaults["retention.ms"]; got != c.want {
			t.Errorf("%v: retention.ms %q, want %q", c.settings, got, c.want)
		}
	}
	config := DefaultConfig()
	if err := config.Set("log.retention.hours", "9223372036854775807"); err == nil {
		t.Error("a retention of 2^63 hours was taken")
	}
}

// A millisecond count a Duration cannot hold is refused rather than
// wrapped to a short time (18446744073710 ms became 0.45 ms of idle time).
func TestMillisecondSettingsRefuseWhatWrapsAround(t *testing.T) {
	config := DefaultConfig()
	if err := config.Set("connections.max.idle.ms", "18446744073710"); err == nil {
		t.Fatal("connections.max.idle.ms=18446744073710 was taken")
	}
	if err := config.Set("connections.max.idle.ms", " 600000 "); err != nil {
		t.Fatalf("connections.max.idle.ms=\" 600000 \": %v", err)
	}
}

// Broker topic defaults are read as topic configs are: trimmed, booleans in
// any case, and stored as Sluice reads them.
func TestBrokerTopicDefaultsAreNormalizedAsTopicConfigsAre(t *testing.T) {
	config := DefaultConfig()
	if err := config.Set("unclean.leader.election.enable", "TRUE"); err != nil {
		t.Fatalf("unclean.leader.election.enable=TRUE: %v", err)
	}
	if err := config.Set("log.segment.bytes", " 1024 "); err != nil {
		t.Fatalf("log.segment.bytes=\" 1024 \": %v", err)
	}
	if got := config.Broker.TopicDefaults["unclean.leader.election.enable"]; got != "true" {
		t.Errorf("unclean.leader.election.enable stored as %q, want true", got)
	}
	if got := config.Broker.TopicDefaults["segment.bytes"]; got != "1024" {
		t.Errorf("segment.bytes stored as %q, want 1024", got)
	}
}

// Every topic config with a broker-level default takes it under Kafka's
// broker name (server.properties' log.cleaner.max.compaction.lag.ms for
// max.compaction.lag.ms, and so on), and the same value is refused under
// both names.
func TestEveryTopicDefaultIsSetUnderKafkasBrokerName(t *testing.T) {
	for _, d := range metadata.TopicConfigDefinitions() {
		name, has := metadata.ServerDefaultName(d.Name)
		if !has {
			unknown := DefaultConfig()
			if err := unknown.Set(d.Name, d.Default); err == nil {
				t.Errorf("%s has no broker-level name, but the broker took it", d.Name)
			}
			continue
		}
		config := DefaultConfig()
		if err := config.Set(name, d.Default); err != nil {
			t.Errorf("%s=%s (for %s): %v", name, d.Default, d.Name, err)
			continue
		}
		if got := config.Broker.TopicDefaults[d.Name]; got != d.Default && name != "log.retention.ms" {
			t.Errorf("%s set %s to %q, want %q", name, d.Name, got, d.Default)
		}
	}
	refusing := DefaultConfig()
	if err := refusing.Set("log.cleaner.max.compaction.lag.ms", "0"); err == nil {
		t.Error("log.cleaner.max.compaction.lag.ms=0 was taken; max.compaction.lag.ms must be at least 1")
	}
}

// Settings given are noted as the operator's, for DescribeConfigs to
// report as STATIC_BROKER_CONFIG; a refused one is not.
func TestSettingsGivenAreNotedAsStatic(t *testing.T) {
	config := DefaultConfig()
	if err := config.Set("num.partitions", "3"); err != nil {
		t.Fatal(err)
	}
	if err := config.Set("auto.create.topics.enable", "maybe"); err == nil {
		t.Fatal("auto.create.topics.enable=maybe was taken")
	}
	if !config.Broker.StaticSettings["num.partitions"] || config.Broker.StaticSettings["auto.create.topics.enable"] {
		t.Fatalf("static settings %v, want num.partitions alone", config.Broker.StaticSettings)
	}
}
