package compat

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
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

// TestFranzGoDescribeLogDirs: kadm's DescribeAllLogDirs (what
// kafka-log-dirs.sh and the topic-size views of Kafka UIs ask) lists the
// broker's data directory, absolute, with every partition it hosts and the
// bytes each holds.
func TestFranzGoDescribeLogDirs(t *testing.T) {
	t.Parallel()
	broker := StartBroker(t, Options{})
	const topic = "sized"
	createTopicWithFranzGo(t, broker.Addr(), topic, 2)
	client, err := kgo.NewClient(kgo.SeedBrokers(broker.Addr()), kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	for _, value := range []string{"one", "two", "three"} {
		if err := client.ProduceSync(ctx, &kgo.Record{Partition: 1, Value: []byte(value)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	described, err := kadm.NewClient(client).DescribeAllLogDirs(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	dirs := described.Sorted()
	dataDir, err := filepath.Abs(broker.DataDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 1 || dirs[0].Err != nil || dirs[0].Dir != dataDir {
		t.Fatalf("log dirs %+v, want one: %s", dirs, dataDir)
	}
	empty, ok0 := dirs[0].Topics.Lookup(topic, 0)
	written, ok1 := dirs[0].Topics.Lookup(topic, 1)
	if !ok0 || !ok1 || empty.Size != 0 || written.Size <= 0 {
		t.Fatalf("%s-0 %+v (listed %v) and %s-1 %+v (listed %v): want 0 bytes and more than 0", topic, empty, ok0, topic, written, ok1)
	}
}
