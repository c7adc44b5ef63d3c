package controller

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

func TestCreateTopicsCreatesPartitionsConfigsAndAnswers(t *testing.T) {
	tc := newTestController(t, Config{TopicDefaults: map[string]string{metadata.ConfigSegmentBytes: "1048576"}}, 1, 2, 3)
	resp := tc.createTopics(false, topicRequest("orders", 6, 2, metadata.ConfigRetentionMs, "1000", metadata.ConfigCleanupPolicy, "compact"))
	answer := resp.Topics[0]
	requireCode(t, "create", answer.ErrorCode, answer.ErrorMessage, nil)
	topic := tc.c.Image().Topics["orders"]
	if topic == nil || answer.TopicID != [16]byte(topic.ID) || topic.ID.IsZero() {
		t.Fatalf("answer id %x, image topic %+v", answer.TopicID, topic)
	}
	if answer.NumPartitions != 6 || answer.ReplicationFactor != 2 || len(topic.Partitions) != 6 {
		t.Fatalf("answer %d partitions x %d, image has %d", answer.NumPartitions, answer.ReplicationFactor, len(topic.Partitions))
	}
	for _, p := range topic.Partitions {
		if len(p.Replicas) != 2 || p.Leader != p.Replicas[0] || !slices.Equal(p.ISR, p.Replicas) || p.LeaderEpoch != 0 || p.PartitionEpoch != 0 {
			t.Fatalf("partition %+v", p)
		}
	}
	if got := tc.c.Image().TopicConfigs("orders"); len(got) != 2 || got[metadata.ConfigRetentionMs] != "1000" || got[metadata.ConfigCleanupPolicy] != "compact" {
		t.Fatalf("image configs %v", got)
	}

	// One proposal: the topic, its configs in name order, then its
	// partitions in order.
	if len(tc.proposer.proposals) != 1 {
		t.Fatalf("%d proposals", len(tc.proposer.proposals))
	}
	records := tc.proposer.proposals[0]
	if len(records) != 1+2+6 || records[0].Topic == nil ||
		records[1].Config == nil || records[1].Config.Name != metadata.ConfigCleanupPolicy ||
		records[2].Config == nil || records[2].Config.Name != metadata.ConfigRetentionMs {
		t.Fatalf("records %+v", records)
	}
	for i, r := range records[3:] {
		if r.Partition == nil || r.Partition.Partition != int32(i) {
			t.Fatalf("record %d is %+v, want partition %d", 3+i, r, i)
		}
	}

	// The answer lists every config with its source.
	sources := map[string]int8{}
	values := map[string]string{}
	for _, config := range answer.Configs {
		sources[config.Name], values[config.Name] = config.Source, deref(config.Value)
	}
	if len(answer.Configs) != len(metadata.TopicConfigDefinitions()) {
		t.Fatalf("answer has %d configs, want all %d", len(answer.Configs), len(metadata.TopicConfigDefinitions()))
	}
	for name, want := range map[string]struct {
		value  string
		source kmsg.ConfigSource
	}{
		metadata.ConfigRetentionMs:       {"1000", kmsg.ConfigSourceDynamicTopicConfig},
		metadata.ConfigCleanupPolicy:     {"compact", kmsg.ConfigSourceDynamicTopicConfig},
		metadata.ConfigSegmentBytes:      {"1048576", kmsg.ConfigSourceStaticBrokerConfig},
		metadata.ConfigMinInsyncReplicas: {"1", kmsg.ConfigSourceDefaultConfig},
	} {
		if values[name] != want.value || sources[name] != int8(want.source) {
			t.Errorf("%s = %q from %d, want %q from %d", name, values[name], sources[name], want.value, want.source)
		}
	}
}

// A config given twice keeps its last value, as Kafka's controller keeps
// it (its configs are a map); Sluice refused the request before.
func TestCreateTopicsKeepsTheLastOfAConfigGivenTwice(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	resp := tc.createTopics(false, topicRequest("twice", 1, 1, metadata.ConfigRetentionMs, "1", metadata.ConfigRetentionMs, "2"))
	requireCode(t, "create", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, nil)
	if got := tc.c.Image().TopicConfigs("twice")[metadata.ConfigRetentionMs]; got != "2" {
		t.Fatalf("retention.ms is %q, want the last given, 2", got)
	}
}

func TestCreateTopicsUsesDefaultsForMinusOne(t *testing.T) {
	tc := newTestController(t, Config{DefaultPartitions: 3, DefaultReplicationFactor: 2}, 1, 2)
	topic := tc.mustCreate("defaults", -1, -1)
	if len(topic.Partitions) != 3 || len(topic.Partitions[0].Replicas) != 2 {
		t.Fatalf("got %d partitions of %d replicas, want 3 of 2", len(topic.Partitions), len(topic.Partitions[0].Replicas))
	}
	// A zero Config means Kafka's defaults: one partition, one replica.
	tc = newTestController(t, Config{}, 1, 2)
	topic = tc.mustCreate("zero", -1, -1)
	if len(topic.Partitions) != 1 || len(topic.Partitions[0].Replicas) != 1 {
		t.Fatalf("got %d partitions of %d replicas, want 1 of 1", len(topic.Partitions), len(topic.Partitions[0].Replicas))
	}
}

func TestCreateTopicsRefusals(t *testing.T) {
	manual := func(name string, partitions int32, replicationFactor int16, assignment ...[]int32) kmsg.CreateTopicsRequestTopic {
		topic := topicRequest(name, partitions, replicationFactor)
		for i, replicas := range assignment {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = int32(i), replicas
			topic.ReplicaAssignment = append(topic.ReplicaAssignment, a)
		}
		return topic
	}
	withNullConfig := topicRequest("null-config", 1, 1)
	withNullConfig.Configs = append(withNullConfig.Configs, kmsg.CreateTopicsRequestTopicConfig{Name: metadata.ConfigRetentionMs})
	misnumbered := manual("misnumbered", -1, -1, []int32{1}, []int32{2})
	misnumbered.ReplicaAssignment[1].Partition = 5
	twice := manual("twice", -1, -1, []int32{1}, []int32{2})
	twice.ReplicaAssignment[1].Partition = 0

	for _, tt := range []struct {
		name  string
		topic kmsg.CreateTopicsRequestTopic
		want  *kerr.Error
	}{
		{"empty name", topicRequest("", 1, 1), kerr.InvalidTopicException},
		{"bad character", topicRequest("a/b", 1, 1), kerr.InvalidTopicException},
		{"dot", topicRequest(".", 1, 1), kerr.InvalidTopicException},
		{"too long", topicRequest(strings.Repeat("x", 250), 1, 1), kerr.InvalidTopicException},
		{"metadata log", topicRequest("__cluster_metadata", 1, 1), kerr.InvalidTopicException},
		{"exists", topicRequest("existing", 1, 1), kerr.TopicAlreadyExists},
		{"collides", topicRequest("with_underscore", 1, 1), kerr.InvalidTopicException},
		{"unknown config", topicRequest("c1", 1, 1, "retention.hours", "1"), kerr.InvalidConfig},
		{"invalid config", topicRequest("c2", 1, 1, metadata.ConfigRetentionMs, "soon"), kerr.InvalidConfig},
		{"null config", withNullConfig, kerr.InvalidConfig},
		{"zero partitions", topicRequest("p0", 0, 1), kerr.InvalidPartitions},
		{"minus two partitions", topicRequest("p-2", -2, 1), kerr.InvalidPartitions},
		{"too many partitions", topicRequest("p-many", partitionsPerTopicMax+1, 1), kerr.InvalidPartitions},
		{"zero replicas", topicRequest("r0", 1, 0), kerr.InvalidReplicationFactor},
		{"minus two replicas", topicRequest("r-2", 1, -2), kerr.InvalidReplicationFactor},
		{"more replicas than brokers", topicRequest("r4", 1, 4), kerr.InvalidReplicationFactor},
		{"assignment with partitions", manual("m1", 1, -1, []int32{1}), kerr.InvalidRequest},
		{"assignment with replication factor", manual("m2", -1, 1, []int32{1}), kerr.InvalidRequest},
		{"assignment misnumbered", misnumbered, kerr.InvalidReplicaAssignment},
		{"assignment of a partition twice", twice, kerr.InvalidReplicaAssignment},
		{"assignment without replicas", manual("m3", -1, -1, []int32{}), kerr.InvalidReplicaAssignment},
		{"assignment to unknown broker", manual("m4", -1, -1, []int32{1, 9}), kerr.InvalidReplicaAssignment},
		{"assignment repeats a broker", manual("m5", -1, -1, []int32{1, 1}), kerr.InvalidReplicaAssignment},
		{"assignment of uneven counts", manual("m6", -1, -1, []int32{1, 2}, []int32{3}), kerr.InvalidReplicaAssignment},
		{"assignment to fenced brokers only", manual("m7", -1, -1, []int32{3}), kerr.InvalidReplicaAssignment},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tc := newTestController(t, Config{}, 1, 2, 3)
			tc.mustCreate("existing", 1, 1)
			tc.mustCreate("with.underscore", 1, 1)
			tc.fence(3)
			before := tc.c.Image().TopicNames()
			proposals := tc.proposer.changes()
			resp := tc.createTopics(false, tt.topic)
			requireCode(t, tt.name, resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, tt.want)
			if resp.Topics[0].NumPartitions != -1 || resp.Topics[0].ReplicationFactor != -1 || resp.Topics[0].TopicID != [16]byte{} {
				t.Fatalf("a refusal answered %+v", resp.Topics[0])
			}
			if tc.proposer.changes() != proposals || !slices.Equal(tc.c.Image().TopicNames(), before) {
				t.Fatalf("a refused creation changed the metadata")
			}
		})
	}
}

func TestCreateTopicsJudgesEachTopicOnItsOwn(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	resp := tc.createTopics(false,
		topicRequest("a", 1, 1),
		topicRequest("dup", 1, 1),
		topicRequest("bad/name", 1, 1),
		topicRequest("dup", 2, 1),
		topicRequest("b", 2, 1),
		topicRequest("b.x", 1, 1),
		topicRequest("b_x", 1, 1), // collides with b.x, created just before
	)
	want := []*kerr.Error{nil, kerr.InvalidRequest, kerr.InvalidTopicException, kerr.InvalidRequest, nil, nil, kerr.InvalidTopicException}
	for i, w := range want {
		requireCode(t, resp.Topics[i].Topic, resp.Topics[i].ErrorCode, resp.Topics[i].ErrorMessage, w)
	}
	if got := tc.c.Image().TopicNames(); !slices.Equal(got, []string{"a", "b", "b.x"}) {
		t.Fatalf("topics %v", got)
	}
	// All of one request's records are one proposal.
	if got := len(tc.proposer.proposals); got != 1 {
		t.Fatalf("%d proposals, want one creation", got)
	}
}

func TestCreateTopicsAllowsInternalNamesButTheMetadataLog(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	tc.mustCreate("__consumer_offsets", 3, 1)
	tc.mustCreate("__my_own", 1, 1)
}

func TestCreateTopicsValidateOnlyCreatesNothing(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2)
	resp := tc.createTopics(true, topicRequest("maybe", 4, 2, metadata.ConfigRetentionMs, "5"), topicRequest("bad", 0, 1))
	requireCode(t, "validate", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, nil)
	requireCode(t, "validate bad", resp.Topics[1].ErrorCode, resp.Topics[1].ErrorMessage, kerr.InvalidPartitions)
	if resp.Topics[0].NumPartitions != 4 || resp.Topics[0].ReplicationFactor != 2 || resp.Topics[0].TopicID != [16]byte{} {
		t.Fatalf("validate-only answered %+v", resp.Topics[0])
	}
	if len(tc.c.Image().Topics) != 0 || len(tc.c.Image().Configs) != 0 || tc.proposer.changes() != 0 {
		t.Fatalf("validate-only changed the metadata: topics %v", tc.c.Image().TopicNames())
	}
	tc.mustCreate("maybe", 4, 2)
}

func TestCreateTopicsWithManualAssignment(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2, 3)
	tc.fence(2)
	topic := topicRequest("manual", -1, -1)
	for i, replicas := range [][]int32{{3, 1}, {2, 3}, {1, 2}} {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		// Out of order: partitions are named, not positional.
		a.Partition, a.Replicas = int32(2-i), replicas
		topic.ReplicaAssignment = append(topic.ReplicaAssignment, a)
	}
	resp := tc.createTopics(false, topic)
	requireCode(t, "manual", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, nil)
	if resp.Topics[0].NumPartitions != 3 || resp.Topics[0].ReplicationFactor != 2 {
		t.Fatalf("answer %+v", resp.Topics[0])
	}
	// The fenced broker 2 is a replica but not in the ISR, and so not
	// the leader.
	want := []struct{ replicas, isr []int32 }{
		{[]int32{1, 2}, []int32{1}},
		{[]int32{2, 3}, []int32{3}},
		{[]int32{3, 1}, []int32{3, 1}},
	}
	for i, p := range tc.c.Image().Topics["manual"].Partitions {
		if !slices.Equal(p.Replicas, want[i].replicas) || !slices.Equal(p.ISR, want[i].isr) || p.Leader != want[i].isr[0] {
			t.Errorf("partition %d: replicas %v isr %v leader %d, want %v %v %d", i, p.Replicas, p.ISR, p.Leader, want[i].replicas, want[i].isr, want[i].isr[0])
		}
	}
}

func TestCreateTopicsBoundsPartitionsPerRequest(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	half := int32(partitionsPerRequestMax/2 + 1)
	resp := tc.createTopics(false, topicRequest("x", half, 1), topicRequest("y", half, 1))
	for _, answer := range resp.Topics {
		requireCode(t, answer.Topic, answer.ErrorCode, answer.ErrorMessage, kerr.InvalidPartitions)
	}
	if len(tc.c.Image().Topics) != 0 {
		t.Fatal("an oversized request created topics")
	}
}

func TestCreateTopicsBoundsRecordsPerRequest(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	// Each topic writes itself, one partition and len(configs) configs.
	var configs []string
	for _, definition := range metadata.TopicConfigDefinitions() {
		configs = append(configs, definition.Name, definition.Default)
	}
	perTopic := 2 + len(configs)/2
	var topics []kmsg.CreateTopicsRequestTopic
	for i := 0; i*perTopic <= recordsPerOperationMax; i++ {
		topics = append(topics, topicRequest("t"+strconv.Itoa(i), 1, 1, configs...))
	}
	resp := tc.createTopics(false, topics...)
	for _, answer := range resp.Topics {
		requireCode(t, answer.Topic, answer.ErrorCode, answer.ErrorMessage, kerr.InvalidRequest)
	}
	if len(tc.c.Image().Topics) != 0 {
		t.Fatal("an oversized request created topics")
	}
}

func TestCreateTopicsFailedCommitChangesNothing(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	tc.proposer.failure = errTest
	resp := tc.createTopics(false, topicRequest("lost", 1, 1), topicRequest("", 1, 1))
	requireCode(t, "lost", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, kerr.RequestTimedOut)
	requireCode(t, "invalid", resp.Topics[1].ErrorCode, resp.Topics[1].ErrorMessage, kerr.InvalidTopicException)
	if len(tc.c.Image().Topics) != 0 {
		t.Fatal("a failed commit created a topic")
	}
	tc.proposer.failure = kerr.NotController
	resp = tc.createTopics(false, topicRequest("lost", 1, 1))
	requireCode(t, "not controller", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, kerr.NotController)
}

type testError string

func (e testError) Error() string { return string(e) }

const errTest = testError("disk on fire")

// A controller deposed without knowing it yet must not answer from its
// stale image: a refusal waits for a no-op barrier to commit, and a
// barrier that cannot commit (the quorum has a new leader) refuses the
// request retriably instead of answering TOPIC_ALREADY_EXISTS for a topic
// its successor may have deleted.
func TestARefusalWaitsForABarrierAndADeposedControllerRetries(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	tc.mustCreate("existing", 1, 1)
	resp := tc.createTopics(false, topicRequest("existing", 1, 1))
	requireCode(t, "existing", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, kerr.TopicAlreadyExists)
	if last := tc.proposer.proposals[len(tc.proposer.proposals)-1]; len(last) != 1 || last[0].NoOp == nil {
		t.Fatalf("the refusal committed %v, want a no-op barrier", last)
	}

	tc.proposer.failure = kerr.NotController
	resp = tc.createTopics(false, topicRequest("existing", 1, 1))
	requireCode(t, "deposed", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, kerr.NotController)
}
