package broker

import (
	"fmt"
	"slices"
	"sluice/core/batch"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

func createTopicsRequest(validateOnly bool, topics ...kmsg.CreateTopicsRequestTopic) *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	req.TimeoutMillis = 30_000
	req.ValidateOnly = validateOnly
	req.Topics = topics
	return req
}

func newTopic(name string, partitions int32) kmsg.CreateTopicsRequestTopic {
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, partitions, -1
	return t
}

// requireTopicInMetadata checks that Metadata shows the topic with its
// partitions, each led by this node at leader epoch 0, and returns it.
func requireTopicInMetadata(t *testing.T, c *testClient, name string, partitions int) kmsg.MetadataResponseTopic {
	t.Helper()
	resp := c.metadata(name)
	topic := resp.Topics[0]
	requireNoError(t, "metadata of "+name, topic.ErrorCode, nil)
	if len(topic.Partitions) != partitions {
		t.Fatalf("metadata shows %d partitions of %s, want %d", len(topic.Partitions), name, partitions)
	}
	for i, p := range topic.Partitions {
		if p.Partition != int32(i) || p.Leader != 1 || !slices.Equal(p.Replicas, []int32{1}) || !slices.Equal(p.ISR, []int32{1}) || p.ErrorCode != 0 {
			t.Fatalf("metadata of %s-%d: %+v", name, i, p)
		}
	}
	return topic
}

// partitionDirectories lists the data directory entries of a topic.
func partitionDirectories(t *testing.T, n *testNode, topic string) []string {
	t.Helper()
	names, err := n.machine.Disk.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, name := range names {
		if strings.HasPrefix(name, topic+"-") || strings.HasPrefix(name, topic+".") {
			dirs = append(dirs, name)
		}
	}
	return dirs
}

func TestCreateTopicsIsVisibleInMetadataAtOnce(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	req := createTopicsRequest(false, newTopic("orders", 3))
	// The answer comes only once the topic is applied here: the very
	// next request sees it, with no time passing in between.
	resp := c.request(req).(*kmsg.CreateTopicsResponse)
	answer := resp.Topics[0]
	requireNoError(t, "create", answer.ErrorCode, answer.ErrorMessage)
	if answer.NumPartitions != 3 || answer.ReplicationFactor != 1 || answer.TopicID == [16]byte{} {
		t.Fatalf("answer %+v", answer)
	}
	topic := requireTopicInMetadata(t, c, "orders", 3)
	if topic.TopicID != answer.TopicID {
		t.Fatalf("metadata id %x, created id %x", topic.TopicID, answer.TopicID)
	}
	if got := partitionDirectories(t, n, "orders"); !slices.Equal(got, []string{"orders-0", "orders-1", "orders-2"}) {
		t.Fatalf("directories %v", got)
	}
	for p := int32(0); p < 3; p++ {
		if offset := c.produce("orders", p, "first"); offset != 0 {
			t.Fatalf("first produce to orders-%d at offset %d", p, offset)
		}
	}

	resp = c.request(req).(*kmsg.CreateTopicsResponse)
	requireError(t, "create again", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, kerr.TopicAlreadyExists)
	if resp.Topics[0].ErrorMessage == nil {
		t.Fatal("no error message")
	}
}

func TestCreateTopicsValidateOnlyCreatesNothing(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	resp := c.request(createTopicsRequest(true, newTopic("maybe", 2))).(*kmsg.CreateTopicsResponse)
	requireNoError(t, "validate", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage)
	if resp.Topics[0].NumPartitions != 2 {
		t.Fatalf("answer %+v", resp.Topics[0])
	}
	requireError(t, "metadata", c.metadata("maybe").Topics[0].ErrorCode, nil, kerr.UnknownTopicOrPartition)
	if dirs := partitionDirectories(t, n, "maybe"); len(dirs) != 0 {
		t.Fatalf("validate-only left directories %v", dirs)
	}
}

// describeConfigs asks for one resource's configs, with synonyms and
// documentation.
func (c *testClient) describeConfigs(resourceType kmsg.ConfigResourceType, name string, configNames ...string) kmsg.DescribeConfigsResponseResource {
	c.node.t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version = 4
	req.IncludeSynonyms = true
	req.IncludeDocumentation = true
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = resourceType, name
	if len(configNames) > 0 {
		r.ConfigNames = configNames
	}
	req.Resources = append(req.Resources, r)
	resp := c.request(req).(*kmsg.DescribeConfigsResponse)
	return resp.Resources[0]
}

func configsByName(r kmsg.DescribeConfigsResponseResource) map[string]kmsg.DescribeConfigsResponseResourceConfig {
	configs := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, config := range r.Configs {
		configs[config.Name] = config
	}
	return configs
}

func requireConfig(t *testing.T, configs map[string]kmsg.DescribeConfigsResponseResourceConfig, name, value string, source kmsg.ConfigSource) {
	t.Helper()
	config, ok := configs[name]
	if !ok {
		t.Fatalf("%s not described", name)
	}
	if config.Value == nil || *config.Value != value || config.Source != source {
		got := "<nil>"
		if config.Value != nil {
			got = *config.Value
		}
		t.Fatalf("%s = %q from %v, want %q from %v", name, got, config.Source, value, source)
	}
}

func TestDescribeConfigsReportsValuesAndSources(t *testing.T) {
	config := DefaultConfig()
	config.TopicDefaults = map[string]string{metadata.ConfigSegmentBytes: "1048576"}
	n := newTestNode(t, config)
	c := n.connect()
	c.createTopic("described", 1, metadata.ConfigRetentionMs, "3600000")

	r := c.describeConfigs(kmsg.ConfigResourceTypeTopic, "described")
	requireNoError(t, "describe", r.ErrorCode, r.ErrorMessage)
	if len(r.Configs) != len(metadata.TopicConfigDefinitions()) {
		t.Fatalf("described %d configs, want %d", len(r.Configs), len(metadata.TopicConfigDefinitions()))
	}
	configs := configsByName(r)
	requireConfig(t, configs, metadata.ConfigRetentionMs, "3600000", kmsg.ConfigSourceDynamicTopicConfig)
	requireConfig(t, configs, metadata.ConfigSegmentBytes, "1048576", kmsg.ConfigSourceStaticBrokerConfig)
	requireConfig(t, configs, metadata.ConfigCleanupPolicy, "delete", kmsg.ConfigSourceDefaultConfig)

	retention := configs[metadata.ConfigRetentionMs]
	if retention.ReadOnly || retention.IsSensitive || retention.ConfigType != kmsg.ConfigTypeLong || retention.Documentation == nil {
		t.Fatalf("retention.ms described as %+v", retention)
	}
	// Synonyms, most specific first, under the broker-level name.
	var synonyms []string
	for _, s := range retention.ConfigSynonyms {
		synonyms = append(synonyms, s.Name+"="+*s.Value+"@"+s.Source.String())
	}
	want := []string{"retention.ms=3600000@DYNAMIC_TOPIC_CONFIG", "log.retention.ms=604800000@DEFAULT_CONFIG"}
	if !slices.Equal(synonyms, want) {
		t.Fatalf("synonyms %v, want %v", synonyms, want)
	}
	if s := configs[metadata.ConfigSegmentBytes].ConfigSynonyms; len(s) != 2 || s[0].Name != "log.segment.bytes" || s[0].Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Fatalf("segment.bytes synonyms %+v", s)
	}

	// ConfigNames filters.
	r = c.describeConfigs(kmsg.ConfigResourceTypeTopic, "described", metadata.ConfigCleanupPolicy, "no.such.config")
	if len(r.Configs) != 1 || r.Configs[0].Name != metadata.ConfigCleanupPolicy {
		t.Fatalf("filtered to %+v", r.Configs)
	}

	r = c.describeConfigs(kmsg.ConfigResourceTypeTopic, "missing")
	requireError(t, "unknown topic", r.ErrorCode, r.ErrorMessage, kerr.UnknownTopicOrPartition)
	r = c.describeConfigs(kmsg.ConfigResourceTypeTopic, "bad/name")
	requireError(t, "invalid topic", r.ErrorCode, r.ErrorMessage, kerr.InvalidTopicException)
}

func TestDescribeConfigsOfTheBroker(t *testing.T) {
	config := DefaultConfig()
	config.TopicDefaults = map[string]string{metadata.ConfigRetentionMs: "1000"}
	config.DefaultPartitions = 3
	config.StaticSettings = map[string]bool{"num.partitions": true}
	n := newTestNode(t, config)
	c := n.connect()
	r := c.describeConfigs(kmsg.ConfigResourceTypeBroker, "1")
	requireNoError(t, "describe broker", r.ErrorCode, r.ErrorMessage)
	configs := configsByName(r)
	requireConfig(t, configs, "node.id", "1", kmsg.ConfigSourceStaticBrokerConfig)
	requireConfig(t, configs, "advertised.listeners", "PLAINTEXT://127.0.0.1:9092", kmsg.ConfigSourceStaticBrokerConfig)
	// What the operator set is static; what was not is Kafka's default.
	requireConfig(t, configs, "num.partitions", "3", kmsg.ConfigSourceStaticBrokerConfig)
	requireConfig(t, configs, "auto.create.topics.enable", "true", kmsg.ConfigSourceDefaultConfig)
	requireConfig(t, configs, "log.retention.ms", "1000", kmsg.ConfigSourceStaticBrokerConfig)
	requireConfig(t, configs, "log.cleanup.policy", "delete", kmsg.ConfigSourceDefaultConfig)
	for name, config := range configs {
		if !config.ReadOnly {
			t.Errorf("broker config %s is not read-only", name)
		}
	}
	if !slices.IsSortedFunc(r.Configs, func(a, b kmsg.DescribeConfigsResponseResourceConfig) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("broker configs are not sorted by name")
	}

	r = c.describeConfigs(kmsg.ConfigResourceTypeBroker, "")
	requireNoError(t, "cluster defaults", r.ErrorCode, r.ErrorMessage)
	if len(r.Configs) != 0 {
		t.Fatalf("cluster-wide dynamic defaults: %+v", r.Configs)
	}
	r = c.describeConfigs(kmsg.ConfigResourceTypeBroker, "2")
	requireError(t, "another broker", r.ErrorCode, r.ErrorMessage, kerr.InvalidRequest)
}

// alterIncrementally sends one IncrementalAlterConfigs operation list for
// a topic.
func (c *testClient) alterIncrementally(topic string, ops ...kmsg.IncrementalAlterConfigsRequestResourceConfig) kmsg.IncrementalAlterConfigsResponseResource {
	c.node.t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	req.Version = 1
	r := kmsg.NewIncrementalAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName, r.Configs = kmsg.ConfigResourceTypeTopic, topic, ops
	req.Resources = append(req.Resources, r)
	return c.request(req).(*kmsg.IncrementalAlterConfigsResponse).Resources[0]
}

func op(name string, operation kmsg.IncrementalAlterConfigOp, value string) kmsg.IncrementalAlterConfigsRequestResourceConfig {
	o := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	o.Name, o.Op = name, operation
	if operation != kmsg.IncrementalAlterConfigOpDelete {
		o.Value = &value
	}
	return o
}

func TestIncrementalAlterConfigsRoundTrip(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("tuned", 1, metadata.ConfigMaxMessageBytes, "5000")

	r := c.alterIncrementally("tuned",
		op(metadata.ConfigRetentionMs, kmsg.IncrementalAlterConfigOpSet, "60000"),
		op(metadata.ConfigMaxMessageBytes, kmsg.IncrementalAlterConfigOpDelete, ""),
		op(metadata.ConfigCleanupPolicy, kmsg.IncrementalAlterConfigOpAppend, "compact"),
	)
	requireNoError(t, "alter", r.ErrorCode, r.ErrorMessage)
	configs := configsByName(c.describeConfigs(kmsg.ConfigResourceTypeTopic, "tuned"))
	requireConfig(t, configs, metadata.ConfigRetentionMs, "60000", kmsg.ConfigSourceDynamicTopicConfig)
	requireConfig(t, configs, metadata.ConfigMaxMessageBytes, "1048588", kmsg.ConfigSourceDefaultConfig)
	requireConfig(t, configs, metadata.ConfigCleanupPolicy, "delete,compact", kmsg.ConfigSourceDynamicTopicConfig)
	// The open partition runs with the new settings.
	p := n.broker.partitions[partitionKey{topic: "tuned", partition: 0}]
	if got := p.Config(); got.Log.RetentionAge.Milliseconds() != 60000 || !got.Compact || !got.Delete || got.MaxMessageBytes != 1048588 {
		t.Fatalf("partition config %+v", got)
	}

	r = c.alterIncrementally("tuned", op(metadata.ConfigRetentionMs, kmsg.IncrementalAlterConfigOpAppend, "1"))
	requireError(t, "append to a number", r.ErrorCode, r.ErrorMessage, kerr.InvalidConfig)
	r = c.alterIncrementally("missing", op(metadata.ConfigRetentionMs, kmsg.IncrementalAlterConfigOpSet, "1"))
	requireError(t, "unknown topic", r.ErrorCode, r.ErrorMessage, kerr.UnknownTopicOrPartition)

	// The legacy AlterConfigs replaces the whole set.
	req := kmsg.NewPtrAlterConfigsRequest()
	req.Version = 2
	resource := kmsg.NewAlterConfigsRequestResource()
	resource.ResourceType, resource.ResourceName = kmsg.ConfigResourceTypeTopic, "tuned"
	value := "2000"
	resource.Configs = append(resource.Configs, kmsg.AlterConfigsRequestResourceConfig{Name: metadata.ConfigSegmentMs, Value: &value})
	req.Resources = append(req.Resources, resource)
	legacy := c.request(req).(*kmsg.AlterConfigsResponse)
	requireNoError(t, "legacy alter", legacy.Resources[0].ErrorCode, legacy.Resources[0].ErrorMessage)
	configs = configsByName(c.describeConfigs(kmsg.ConfigResourceTypeTopic, "tuned"))
	requireConfig(t, configs, metadata.ConfigSegmentMs, "2000", kmsg.ConfigSourceDynamicTopicConfig)
	requireConfig(t, configs, metadata.ConfigRetentionMs, "604800000", kmsg.ConfigSourceDefaultConfig)
	requireConfig(t, configs, metadata.ConfigCleanupPolicy, "delete", kmsg.ConfigSourceDefaultConfig)
}

func TestCreatePartitionsGrowsTheTopicAndTheNewOnesAcceptProduce(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("growing", 1)
	c.produce("growing", 0, "a", "b")

	req := kmsg.NewPtrCreatePartitionsRequest()
	req.Version = 3
	req.TimeoutMillis = 30_000
	topic := kmsg.NewCreatePartitionsRequestTopic()
	topic.Topic, topic.Count = "growing", 4
	req.Topics = append(req.Topics, topic)
	resp := c.request(req).(*kmsg.CreatePartitionsResponse)
	requireNoError(t, "grow", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage)
	requireTopicInMetadata(t, c, "growing", 4)
	for p := int32(1); p < 4; p++ {
		if offset := c.produce("growing", p, "new"); offset != 0 {
			t.Fatalf("produce to new partition %d at offset %d", p, offset)
		}
		values, code, _ := c.fetch("growing", p, 0)
		requireNoError(t, "fetch", code, nil)
		if !slices.Equal(values, []string{"new"}) {
			t.Fatalf("partition %d holds %v", p, values)
		}
	}
	if values, _, _ := c.fetch("growing", 0, 0); !slices.Equal(values, []string{"a", "b"}) {
		t.Fatalf("partition 0 holds %v", values)
	}

	resp = c.request(req).(*kmsg.CreatePartitionsResponse)
	requireError(t, "same count", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, kerr.InvalidPartitions)
}

func TestDeleteTopicsRemovesDataAndTheNameStartsOver(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	created := c.createTopic("doomed", 2, metadata.ConfigRetentionMs, "1000")
	c.produce("doomed", 0, "old-0", "old-1")
	c.produce("doomed", 1, "old")

	answer := c.deleteTopicByID(created.TopicID)
	requireNoError(t, "delete", answer.ErrorCode, answer.ErrorMessage)
	if answer.Topic == nil || *answer.Topic != "doomed" {
		t.Fatalf("answer %+v", answer)
	}
	requireError(t, "metadata", c.metadata("doomed").Topics[0].ErrorCode, nil, kerr.UnknownTopicOrPartition)
	if dirs := partitionDirectories(t, n, "doomed"); len(dirs) != 0 {
		t.Fatalf("deleted topic left %v", dirs)
	}
	_, code := c.tryProduce("doomed", 0, "late")
	requireError(t, "produce to deleted", code, nil, kerr.UnknownTopicOrPartition)

	again := c.createTopic("doomed", 1)
	if again.TopicID == created.TopicID {
		t.Fatal("the re-created topic has the old id")
	}
	values, code, _ := c.fetch("doomed", 0, 0)
	requireNoError(t, "fetch", code, nil)
	if len(values) != 0 {
		t.Fatalf("re-created topic holds %v", values)
	}
	if offset := c.produce("doomed", 0, "new"); offset != 0 {
		t.Fatalf("first produce to the re-created topic at offset %d", offset)
	}
	configs := configsByName(c.describeConfigs(kmsg.ConfigResourceTypeTopic, "doomed"))
	requireConfig(t, configs, metadata.ConfigRetentionMs, "604800000", kmsg.ConfigSourceDefaultConfig)

	// The deletion survives a crash, and the new topic is the one there.
	n.restart()
	c = n.connect()
	values, code, _ = c.fetch("doomed", 0, 0)
	requireNoError(t, "fetch after restart", code, nil)
	if !slices.Equal(values, []string{"new"}) {
		t.Fatalf("after restart the topic holds %v", values)
	}
	requireTopicInMetadata(t, c, "doomed", 1)

	answer = c.deleteTopicByID(created.TopicID)
	requireError(t, "delete by old id", answer.ErrorCode, answer.ErrorMessage, kerr.UnknownTopicID)
}

// A topic name may be 249 characters: its partition directory, renamed
// on deletion to "<dir>.<id>-delete", would be longer than a file name may
// be, and the rename failed: the data stayed, and the topic created again
// could not open its partition. The renamed name is shortened, as Kafka's
// logDirNameWithSuffixCappedLength shortens it.
func TestATopicWithTheLongestNameIsDeletedAndCreatedAgain(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	name := strings.Repeat("z", 249)
	created := c.createTopic(name, 1)
	c.produce(name, 0, "old")
	answer := c.deleteTopicByID(created.TopicID)
	requireNoError(t, "delete", answer.ErrorCode, answer.ErrorMessage)
	if dirs := partitionDirectories(t, n, name); len(dirs) != 0 {
		t.Fatalf("the deleted topic left %v", dirs)
	}
	c.createTopic(name, 1)
	if offset := c.produce(name, 0, "new"); offset != 0 {
		t.Fatalf("first produce to the re-created topic at offset %d", offset)
	}
	values, code, _ := c.fetch(name, 0, 0)
	requireNoError(t, "fetch", code, nil)
	if !slices.Equal(values, []string{"new"}) {
		t.Fatalf("the re-created topic holds %v", values)
	}
}

func TestRenamedPartitionDirectoriesStayFileNames(t *testing.T) {
	id := strings.Repeat("f", 32)
	if got, want := renamedPartitionDir("orders-3", id, deletedSuffix), "orders-3."+id+"-delete"; got != want {
		t.Errorf("a short name: %q, want %q", got, want)
	}
	long := strings.Repeat("z", 249) + "-4999"
	got := renamedPartitionDir(long, id, straySuffix)
	if len(got) != fileNameBytesMax || !strings.HasSuffix(got, "z-4999."+id+"-stray") || !strings.HasPrefix(got, "zzz") {
		t.Errorf("the longest name: %q (%d bytes), want the topic shortened to fit %d bytes", got, len(got), fileNameBytesMax)
	}
}

// deleteTopicByID deletes a topic by its id (DeleteTopics v6).
func (c *testClient) deleteTopicByID(id [16]byte) kmsg.DeleteTopicsResponseTopic {
	c.node.t.Helper()
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = 6
	req.TimeoutMillis = 30_000
	byID := kmsg.NewDeleteTopicsRequestTopic()
	byID.TopicID = id
	req.Topics = append(req.Topics, byID)
	return c.request(req).(*kmsg.DeleteTopicsResponse).Topics[0]
}

// A topic deleted and created again, then a power loss before the
// deletion's renames were synced: the deleted topic's directory is back
// under the name, and the new topic must not take it for its own.
func TestARecreatedTopicServesNoneOfTheDeletedOnesRecordsAfterAPowerLoss(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	deleted := c.createTopic("doomed", 1)
	c.produce("doomed", 0, "old-0", "old-1")
	n.run(settleTime)

	answer := c.deleteTopicByID(deleted.TopicID)
	requireNoError(t, "delete", answer.ErrorCode, answer.ErrorMessage)
	created := c.createTopic("doomed", 1)
	n.restart() // at once: the directory changes were never synced
	c = n.connect()

	values, code, _ := c.fetch("doomed", 0, 0)
	requireNoError(t, "fetch after restart", code, nil)
	if len(values) != 0 {
		t.Fatalf("the re-created topic serves the deleted one's records %v", values)
	}
	if offset := c.produce("doomed", 0, "new"); offset != 0 {
		t.Fatalf("first produce to the re-created topic at offset %d", offset)
	}
	if got := c.metadata("doomed").Topics[0].TopicID; got != created.TopicID {
		t.Fatalf("topic id %x after restart, want the re-created topic's %x", got, created.TopicID)
	}
	if dirs := partitionDirectories(t, n, "doomed"); !slices.Equal(dirs, []string{"doomed-0"}) {
		t.Fatalf("directories %v, want only the new topic's", dirs)
	}
}

// deleteRecords asks to delete partition 0 of topic below offset.
func (c *testClient) deleteRecords(topic string, offset int64) kmsg.DeleteRecordsResponseTopicPartition {
	c.node.t.Helper()
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.Version = 2
	req.TimeoutMillis = 30_000
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Partition, rp.Offset = 0, offset
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return c.request(req).(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]
}

func TestDeleteRecordsMovesTheLogStart(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	// Small segments, so that deleting records deletes files too.
	c.createTopic("trimmed", 1, metadata.ConfigSegmentBytes, "128")
	for i := 0; i < 6; i++ {
		c.produce("trimmed", 0, "v"+string(rune('0'+i)))
	}
	partition := n.broker.partitions[partitionKey{topic: "trimmed", partition: 0}]
	segmentsBefore := len(partitionFiles(t, n, "trimmed-0", ".log"))

	answer := c.deleteRecords("trimmed", 3)
	requireNoError(t, "delete records", answer.ErrorCode, nil)
	if answer.LowWatermark != 3 || partition.LogStartOffset() != 3 {
		t.Fatalf("low watermark %d, log start %d, want 3", answer.LowWatermark, partition.LogStartOffset())
	}
	if after := len(partitionFiles(t, n, "trimmed-0", ".log")); after >= segmentsBefore {
		t.Fatalf("%d segment files before deleting records, %d after", segmentsBefore, after)
	}
	_, code, _ := c.fetch("trimmed", 0, 2)
	requireError(t, "fetch below the start", code, nil, kerr.OffsetOutOfRange)
	values, code, start := c.fetchAll("trimmed", 0, 3)
	requireNoError(t, "fetch from the start", code, nil)
	if !slices.Equal(values, []string{"v3", "v4", "v5"}) || start != 3 {
		t.Fatalf("fetched %v with log start %d", values, start)
	}

	// Deleting less moves nothing; above the high watermark is refused.
	if answer = c.deleteRecords("trimmed", 1); answer.ErrorCode != 0 || answer.LowWatermark != 3 {
		t.Fatalf("deleting below the start answered %+v", answer)
	}
	answer = c.deleteRecords("trimmed", 7)
	requireError(t, "above the high watermark", answer.ErrorCode, nil, kerr.OffsetOutOfRange)
	answer = c.deleteRecords("missing", 0)
	requireError(t, "unknown topic", answer.ErrorCode, nil, kerr.UnknownTopicOrPartition)

	// The answer came once the new start was durable: a crash keeps it.
	n.restart()
	c = n.connect()
	partition = n.broker.partitions[partitionKey{topic: "trimmed", partition: 0}]
	if partition.LogStartOffset() != 3 {
		t.Fatalf("after restart the log starts at %d, want 3", partition.LogStartOffset())
	}

	// -1 deletes everything below the high watermark.
	answer = c.deleteRecords("trimmed", -1)
	requireNoError(t, "delete to the high watermark", answer.ErrorCode, nil)
	if answer.LowWatermark != 6 {
		t.Fatalf("low watermark %d, want 6", answer.LowWatermark)
	}
	values, code, _ = c.fetch("trimmed", 0, 6)
	requireNoError(t, "fetch at the end", code, nil)
	if len(values) != 0 {
		t.Fatalf("fetched %v", values)
	}
}

func TestDeleteRecordsTimesOutButStillMoves(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("hurried", 1)
	c.produce("hurried", 0, "a", "b")
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.Version = 2
	req.TimeoutMillis = 0 // no time to wait for the sync
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = "hurried"
	rt.Partitions = append(rt.Partitions, kmsg.DeleteRecordsRequestTopicPartition{Partition: 0, Offset: 1})
	req.Topics = append(req.Topics, rt)
	answer := c.request(req).(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]
	requireError(t, "no time", answer.ErrorCode, nil, kerr.RequestTimedOut)
	if answer.LowWatermark != -1 {
		t.Fatalf("a timed-out answer names low watermark %d", answer.LowWatermark)
	}
	// The move stays and becomes durable on its own.
	n.run(settleTime)
	n.restart()
	if start := n.broker.partitions[partitionKey{topic: "hurried", partition: 0}].LogStartOffset(); start != 1 {
		t.Fatalf("after restart the log starts at %d, want 1", start)
	}
}

func TestCompactedTopicsRefuseKeylessRecords(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("compacted", 1, metadata.ConfigCleanupPolicy, "compact")
	keyless := batch.Build(batch.Spec{
		BaseTimestamp: n.machine.Clock.Now().UnixMilli(), ProducerID: batch.NoProducerID,
		Records: []batch.Record{{Key: []byte("k"), Value: []byte("1")}, {Value: []byte("no key")}},
	})
	_, code := c.produceBatch("compacted", 0, keyless)
	requireError(t, "keyless record", code, nil, kerr.InvalidRecord)
	c.produce("compacted", 0, "keyed")
}

func TestDeleteRecordsRefusesCompactedTopics(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("compacted", 1, metadata.ConfigCleanupPolicy, "compact")
	c.produce("compacted", 0, "a")
	answer := c.deleteRecords("compacted", 1)
	requireError(t, "compacted", answer.ErrorCode, nil, kerr.PolicyViolation)
}

// partitionFiles lists a partition directory's files with a suffix.
func partitionFiles(t *testing.T, n *testNode, dir, suffix string) []string {
	t.Helper()
	names, err := n.machine.Disk.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, name := range names {
		if strings.HasSuffix(name, suffix) {
			files = append(files, name)
		}
	}
	return files
}

// offsetForLeaderEpoch asks about partition 0 of topic.
func (c *testClient) offsetForLeaderEpoch(topic string, current, epoch int32) kmsg.OffsetForLeaderEpochResponseTopicPartition {
	c.node.t.Helper()
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.Version = 4
	req.ReplicaID = -1
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
	rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = 0, current, epoch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return c.request(req).(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0]
}

func TestOffsetForLeaderEpoch(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("epochs", 1)
	c.produce("epochs", 0, "a", "b", "c")

	requireAnswer := func(what string, got kmsg.OffsetForLeaderEpochResponseTopicPartition, code *kerr.Error, epoch int32, end int64) {
		t.Helper()
		requireError(t, what, got.ErrorCode, nil, code)
		if got.LeaderEpoch != epoch || got.EndOffset != end {
			t.Fatalf("%s: epoch %d end %d, want %d and %d", what, got.LeaderEpoch, got.EndOffset, epoch, end)
		}
	}
	requireAnswer("latest epoch", c.offsetForLeaderEpoch("epochs", 0, 0), nil, 0, 3)
	requireAnswer("future epoch", c.offsetForLeaderEpoch("epochs", -1, 5), nil, -1, -1)
	requireAnswer("newer current epoch", c.offsetForLeaderEpoch("epochs", 1, 0), kerr.UnknownLeaderEpoch, -1, -1)
	requireAnswer("unknown topic", c.offsetForLeaderEpoch("missing", -1, 0), kerr.UnknownTopicOrPartition, -1, -1)

	// Move leadership to epoch 2, as an election on this same node would:
	// leaderless (epoch 1), then led by node 1 again (epoch 2).
	bumpLeaderEpoch(t, n, "epochs")
	requireAnswer("fenced", c.offsetForLeaderEpoch("epochs", 0, 0), kerr.FencedLeaderEpoch, -1, -1)
	// Epoch 2 has written nothing yet; it starts at the log end, as
	// Kafka's cache records at election.
	requireAnswer("new epoch before writing", c.offsetForLeaderEpoch("epochs", 2, 2), nil, 2, 3)
	requireAnswer("skipped epoch before writing", c.offsetForLeaderEpoch("epochs", 2, 1), nil, 0, 3)
	c.produce("epochs", 0, "d", "e")
	requireAnswer("old epoch", c.offsetForLeaderEpoch("epochs", 2, 0), nil, 0, 3)
	requireAnswer("skipped epoch", c.offsetForLeaderEpoch("epochs", 2, 1), nil, 0, 3)
	requireAnswer("new epoch", c.offsetForLeaderEpoch("epochs", 2, 2), nil, 2, 5)
}

func TestDescribeCluster(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	req := kmsg.NewPtrDescribeClusterRequest()
	req.Version = 1
	resp := c.request(req).(*kmsg.DescribeClusterResponse)
	requireNoError(t, "describe cluster", resp.ErrorCode, resp.ErrorMessage)
	if resp.ClusterID != n.broker.ClusterID() || resp.ControllerID != 1 || resp.EndpointType != 1 ||
		len(resp.Brokers) != 1 || resp.Brokers[0].NodeID != 1 || resp.Brokers[0].Host != "127.0.0.1" || resp.Brokers[0].Port != 9092 {
		t.Fatalf("answer %+v", resp)
	}
	if metadata := c.metadata(); metadata.ClusterID == nil || *metadata.ClusterID != resp.ClusterID {
		t.Fatal("DescribeCluster and Metadata disagree on the cluster id")
	}
	req.EndpointType = 2
	resp = c.request(req).(*kmsg.DescribeClusterResponse)
	requireError(t, "controllers", resp.ErrorCode, resp.ErrorMessage, kerr.MismatchedEndpointType)
	req.EndpointType = 7
	resp = c.request(req).(*kmsg.DescribeClusterResponse)
	requireError(t, "unknown endpoint type", resp.ErrorCode, resp.ErrorMessage, kerr.UnsupportedEndpointType)
}

func TestRestartKeepsTopicsAndConfigs(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	created := c.createTopic("kept", 2, metadata.ConfigRetentionMs, "5000")
	r := c.alterIncrementally("kept", op(metadata.ConfigCleanupPolicy, kmsg.IncrementalAlterConfigOpSet, "compact"))
	requireNoError(t, "alter", r.ErrorCode, r.ErrorMessage)
	c.produce("kept", 1, "durable")
	before := c.describeConfigs(kmsg.ConfigResourceTypeTopic, "kept")

	n.restart()
	c = n.connect()
	topic := requireTopicInMetadata(t, c, "kept", 2)
	if topic.TopicID != created.TopicID {
		t.Fatal("the topic id changed across a restart")
	}
	after := c.describeConfigs(kmsg.ConfigResourceTypeTopic, "kept")
	configs := configsByName(after)
	requireConfig(t, configs, metadata.ConfigRetentionMs, "5000", kmsg.ConfigSourceDynamicTopicConfig)
	requireConfig(t, configs, metadata.ConfigCleanupPolicy, "compact", kmsg.ConfigSourceDynamicTopicConfig)
	if len(after.Configs) != len(before.Configs) {
		t.Fatalf("%d configs before the restart, %d after", len(before.Configs), len(after.Configs))
	}
	for i := range before.Configs {
		if before.Configs[i].Name != after.Configs[i].Name || *before.Configs[i].Value != *after.Configs[i].Value || before.Configs[i].Source != after.Configs[i].Source {
			t.Fatalf("config %s changed across a restart", before.Configs[i].Name)
		}
	}
	values, code, _ := c.fetch("kept", 1, 0)
	requireNoError(t, "fetch", code, nil)
	if !slices.Equal(values, []string{"durable"}) {
		t.Fatalf("after restart kept-1 holds %v", values)
	}
	p := n.broker.partitions[partitionKey{topic: "kept", partition: 0}]
	if !p.Config().Compact || p.Config().Delete {
		t.Fatalf("partition config after restart %+v", p.Config())
	}
}

func TestAPIVersionsAdvertisesTheAdminAPIs(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "sluice-test", "1"
	resp := c.request(req).(*kmsg.ApiVersionsResponse)
	advertised := map[int16][2]int16{}
	for _, k := range resp.ApiKeys {
		advertised[k.ApiKey] = [2]int16{k.MinVersion, k.MaxVersion}
	}
	for key, want := range map[int16][2]int16{
		19: {2, 7}, 20: {1, 6}, 21: {0, 2}, 23: {2, 4}, 32: {1, 4}, 33: {0, 2}, 37: {0, 3}, 44: {0, 1}, 60: {0, 1},
	} {
		if advertised[key] != want {
			t.Errorf("%s advertised as %v, want %v", kmsg.NameForKey(key), advertised[key], want)
		}
	}
}

// TestAdminTraceIsDeterministic runs the same admin scenario twice and
// compares the simulation's trace hashes: the controller's placement
// draws, topic ids and every log line must replay from the seed.
func TestAdminTraceIsDeterministic(t *testing.T) {
	scenario := func() (string, uint64) {
		n := newTestNode(t, DefaultConfig())
		c := n.connect()
		c.createTopic("a", 3, metadata.ConfigRetentionMs, "1000")
		c.produce("a", 1, "x", "y")
		c.alterIncrementally("a", op(metadata.ConfigCleanupPolicy, kmsg.IncrementalAlterConfigOpAppend, "compact"))
		c.deleteRecords("a", -1)
		n.restart()
		c = n.connect()
		c.createTopic("b", 2)
		return n.kernel.Trace().Hash(), n.kernel.Trace().Entries()
	}
	firstHash, firstEntries := scenario()
	secondHash, secondEntries := scenario()
	if firstHash != secondHash || firstEntries != secondEntries {
		t.Fatalf("same seed, different traces: %s (%d entries) and %s (%d entries)", firstHash, firstEntries, secondHash, secondEntries)
	}
	if firstEntries == 0 {
		t.Fatal("the trace is empty")
	}
}

// DescribeLogDirs lists every partition this broker hosts in its one data
// directory, with the bytes its log holds; naming topics limits it to
// their partitions, and a partition it does not host is left out.
func TestDescribeLogDirs(t *testing.T) {
	config := DefaultConfig()
	config.LogDir = "/var/lib/sluice"
	n := newTestNode(t, config)
	c := n.connect()
	c.createTopic("sized", 2)
	c.createTopic("other", 1)
	c.produce("sized", 1, "a", "b", "c")
	describe := func(topics []kmsg.DescribeLogDirsRequestTopic) kmsg.DescribeLogDirsResponseDir {
		req := kmsg.NewPtrDescribeLogDirsRequest()
		req.Version, req.Topics = 4, topics
		resp := c.request(req).(*kmsg.DescribeLogDirsResponse)
		if resp.ErrorCode != 0 || len(resp.Dirs) != 1 || resp.Dirs[0].ErrorCode != 0 || resp.Dirs[0].Dir != "/var/lib/sluice" || resp.Dirs[0].TotalBytes != -1 {
			t.Fatalf("answer %+v", resp)
		}
		return resp.Dirs[0]
	}
	sizes := func(dir kmsg.DescribeLogDirsResponseDir) map[string]int64 {
		got := map[string]int64{}
		for _, topic := range dir.Topics {
			for _, p := range topic.Partitions {
				if p.OffsetLag != 0 || p.IsFuture {
					t.Fatalf("%s-%d: lag %d, future %v", topic.Topic, p.Partition, p.OffsetLag, p.IsFuture)
				}
				got[fmt.Sprintf("%s-%d", topic.Topic, p.Partition)] = p.Size
			}
		}
		return got
	}
	all := sizes(describe(nil))
	if len(all) < 3 || all["sized-0"] != 0 || all["sized-1"] <= 0 || all["other-0"] != 0 {
		t.Fatalf("every partition: %v; want sized-0, sized-1 (holding three records) and other-0", all)
	}
	topic := kmsg.NewDescribeLogDirsRequestTopic()
	topic.Topic, topic.Partitions = "sized", []int32{1, 7}
	named := sizes(describe([]kmsg.DescribeLogDirsRequestTopic{topic}))
	if len(named) != 1 || named["sized-1"] != all["sized-1"] {
		t.Fatalf("sized-1 and sized-7 named: %v", named)
	}
}

// DescribeProducers answers, from the partition leader, each idempotent
// producer's id, epoch, last sequence and last batch's max timestamp,
// with no transaction (coordinator epoch and transaction start -1);
// plain batches leave no producer.
func TestDescribeProducersNamesTheIdempotentProducers(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("p", 2)
	if _, code := c.produceIdempotent("p", 7, 2, 0, "a", "b", "c"); code != 0 {
		t.Fatalf("first idempotent batch: %v", kerr.ErrorForCode(code))
	}
	n.run(50 * time.Millisecond)
	sentAt := n.machine.Clock.Now().UnixMilli()
	if _, code := c.produceIdempotent("p", 7, 2, 3, "d", "e"); code != 0 {
		t.Fatalf("second idempotent batch: %v", kerr.ErrorForCode(code))
	}
	c.produce("p", 0, "plain")
	c.produce("p", 1, "plain")

	req := kmsg.NewPtrDescribeProducersRequest()
	for _, topic := range []struct {
		name       string
		partitions []int32
	}{{"p", []int32{0, 1, 5}}, {"missing", []int32{0}}} {
		rt := kmsg.NewDescribeProducersRequestTopic()
		rt.Topic, rt.Partitions = topic.name, topic.partitions
		req.Topics = append(req.Topics, rt)
	}
	resp := c.request(req).(*kmsg.DescribeProducersResponse)
	if len(resp.Topics) != 2 || len(resp.Topics[0].Partitions) != 3 || len(resp.Topics[1].Partitions) != 1 {
		t.Fatalf("answer %+v", resp)
	}
	zero, one, five := resp.Topics[0].Partitions[0], resp.Topics[0].Partitions[1], resp.Topics[0].Partitions[2]
	requireNoError(t, "partition 0", zero.ErrorCode, zero.ErrorMessage)
	if got := zero.ActiveProducers; len(got) != 1 || got[0].ProducerID != 7 || got[0].ProducerEpoch != 2 || got[0].LastSequence != 4 ||
		got[0].LastTimestamp != sentAt || got[0].CoordinatorEpoch != -1 || got[0].CurrentTxnStartOffset != -1 {
		t.Fatalf("partition 0's producers %+v, want producer 7 epoch 2, last sequence 4 at %d, no transaction", got, sentAt)
	}
	requireNoError(t, "partition 1", one.ErrorCode, one.ErrorMessage)
	if len(one.ActiveProducers) != 0 {
		t.Fatalf("partition 1, written by a plain batch alone, has producers %+v", one.ActiveProducers)
	}
	requireError(t, "partition 5", five.ErrorCode, five.ErrorMessage, kerr.UnknownTopicOrPartition)
	missing := resp.Topics[1].Partitions[0]
	requireError(t, "missing topic", missing.ErrorCode, missing.ErrorMessage, kerr.UnknownTopicOrPartition)
}
