package compat

import (
	"strings"
	"testing"
)

// TestSluiceTopicAlterAndElectLeaders: `sluice topic alter` sets and
// removes a topic's configs as kafka-configs.sh --alter does, `describe`
// shows them, and `sluice topic elect-leaders` (kafka-leader-election.sh)
// finds nothing to do on a single broker, whose partitions are all led by
// their only, preferred, replica.
func TestSluiceTopicAlterAndElectLeaders(t *testing.T) {
	t.Parallel()
	broker := StartBroker(t, Options{})
	binary := BuildBinary(t)
	const topic = "altered"
	createTopicWithFranzGo(t, broker.Addr(), topic, 2)
	describe := func() string {
		return string(runOutsideTool(t, nil, binary, "topic", "describe", "--brokers", broker.Addr(), topic))
	}
	out := string(runOutsideTool(t, nil, binary, "topic", "alter", "--brokers", broker.Addr(),
		"--config", "retention.ms=123456", "--config", "unclean.leader.election.enable=true", topic))
	if !strings.Contains(out, "altered "+topic) {
		t.Fatalf("sluice topic alter printed %q", out)
	}
	if described := describe(); !strings.Contains(described, "config retention.ms=123456") || !strings.Contains(described, "config unclean.leader.election.enable=true") {
		t.Fatalf("describe after alter:\n%s", described)
	}
	runOutsideTool(t, nil, binary, "topic", "alter", "--brokers", broker.Addr(), "--delete-config", "retention.ms", topic)
	if described := describe(); strings.Contains(described, "retention.ms") || !strings.Contains(described, "unclean.leader.election.enable=true") {
		t.Fatalf("describe after --delete-config retention.ms:\n%s", described)
	}
	out = string(runOutsideTool(t, nil, binary, "topic", "elect-leaders", "--brokers", broker.Addr(), topic))
	if !strings.Contains(out, topic+"-0 needs no election") || !strings.Contains(out, topic+"-1 needs no election") {
		t.Fatalf("sluice topic elect-leaders %s printed %q", topic, out)
	}
	if out = string(runOutsideTool(t, nil, binary, "topic", "elect-leaders", "--brokers", broker.Addr())); !strings.Contains(out, "no partition needs an election") {
		t.Fatalf("sluice topic elect-leaders (every partition) printed %q", out)
	}
	if out = string(runOutsideTool(t, nil, binary, "topic", "elect-leaders", "--unclean", "--brokers", broker.Addr(), topic)); !strings.Contains(out, topic+"-0 needs no election") {
		t.Fatalf("sluice topic elect-leaders --unclean printed %q", out)
	}
}
