package broker

// Behaviours Kafka's clients see that a review against Kafka's broker
// found Sluice answering otherwise; each test failed before its fix.

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
	"sluice/core/metadata"
)

// Kafka answers a duplicate with LogAppendTime = the original batch's
// timestamp (UnifiedLog.append: appendInfo.setLogAppendTime(duplicate.timestamp)).
// On a LogAppendTime topic that is the time the records carry; Sluice
// answers the retry with the current time instead.
func TestADuplicateIsAnsweredWithTheOriginalsAppendTime(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("lat", 1, metadata.ConfigMessageTimestampType, "LogAppendTime")
	initProducer := kmsg.NewPtrInitProducerIDRequest()
	initProducer.Version = 4
	pid := c.request(initProducer).(*kmsg.InitProducerIDResponse)
	requireNoError(t, "InitProducerId", pid.ErrorCode, nil)
	produce := func() kmsg.ProduceResponseTopicPartition {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = 9, -1, 30_000
		rt := kmsg.NewProduceRequestTopic()
		rt.Topic = "lat"
		rp := kmsg.NewProduceRequestTopicPartition()
		rp.Records = batch.Build(batch.Spec{
			BaseTimestamp: n.machine.Clock.Now().UnixMilli(), ProducerID: pid.ProducerID, ProducerEpoch: pid.ProducerEpoch,
			Records: []batch.Record{{Value: []byte("x")}},
		})
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		return c.request(req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	}
	first := produce()
	requireNoError(t, "first", first.ErrorCode, nil)
	n.run(5 * time.Second)
	retry := produce()
	requireNoError(t, "retry", retry.ErrorCode, nil)
	if retry.BaseOffset != first.BaseOffset || retry.LogAppendTime != first.LogAppendTime {
		t.Fatalf("retry answered offset %d time %d; the original %d time %d (Kafka answers the original's time)",
			retry.BaseOffset, retry.LogAppendTime, first.BaseOffset, first.LogAppendTime)
	}
}

// Kafka's ProduceRequest.validateRecords refuses a partition whose records
// hold no batch, or more than one, with INVALID_RECORD (not retriable);
// Sluice answered CORRUPT_MESSAGE, which Java's producer retries
// (CorruptRecordException is a RetriableException) until delivery.timeout.ms.
func TestProducedRecordsMustBeOneWholeBatch(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("two", 1)
	one := batch.Build(batch.Spec{BaseTimestamp: n.machine.Clock.Now().UnixMilli(), ProducerID: batch.NoProducerID, Records: []batch.Record{{Value: []byte("a")}}})
	two := append(append([]byte(nil), one...), one...)
	_, code := c.produceBatch("two", 0, two)
	if code != kerr.InvalidRecord.Code {
		t.Errorf("two batches: %v; Kafka answers INVALID_RECORD", kerr.ErrorForCode(code))
	}
	_, code = c.produceBatch("two", 0, []byte{})
	if code != kerr.InvalidRecord.Code {
		t.Errorf("no batch: %v; Kafka answers INVALID_RECORD", kerr.ErrorForCode(code))
	}
}

// Fetch MaxBytes=0: Kafka caps the answer at 0 bytes, except the first
// batch (KIP-74); Sluice read as if there were no limit (64 MiB).
func TestFetchMaxBytesZeroAnswersTheFirstBatch(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("mb", 1)
	c.produce("mb", 0, "a")
	c.produce("mb", 0, "b")
	c.produce("mb", 0, "c")
	req := kmsg.NewPtrFetchRequest()
	req.Version = 12
	req.ReplicaID = -1
	req.MaxBytes = 0
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "mb"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes, rp.CurrentLeaderEpoch = 0, 0, 1<<20, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	answer := c.request(req).(*kmsg.FetchResponse).Topics[0].Partitions[0]
	batches := 0
	s := batch.Scanner{Buf: answer.RecordBatches}
	for s.Next() {
		batches++
	}
	if batches != 1 {
		t.Fatalf("MaxBytes 0 answered %d batches; Kafka answers only the first (KIP-74)", batches)
	}
}

// Kafka refuses DeleteRecords on an internal topic with
// INVALID_TOPIC_EXCEPTION, whatever its cleanup.policy
// (ReplicaManager.deleteRecordsOnLocalLog). Sluice checked only the
// policy: compact-only gave POLICY_VIOLATION, and once an operator added
// "delete" to __consumer_offsets, DeleteRecords -1 deleted the groups'
// committed offsets.
func TestDeleteRecordsRefusesInternalTopics(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.findCoordinator(0, "g") // creates __consumer_offsets
	n.run(settleTime)
	if _, ok := n.broker.image.Topics[metadata.ConsumerOffsetsTopic]; !ok {
		t.Fatal("no __consumer_offsets")
	}
	got := c.deleteRecords(metadata.ConsumerOffsetsTopic, -1)
	t.Logf("compact: %v", kerr.ErrorForCode(got.ErrorCode))
	if got.ErrorCode != kerr.InvalidTopicException.Code {
		t.Errorf("DeleteRecords on __consumer_offsets (compact): %v; Kafka answers INVALID_TOPIC_EXCEPTION", kerr.ErrorForCode(got.ErrorCode))
	}
	r := c.alterIncrementally(metadata.ConsumerOffsetsTopic, op(metadata.ConfigCleanupPolicy, kmsg.IncrementalAlterConfigOpAppend, "delete"))
	requireNoError(t, "alter", r.ErrorCode, r.ErrorMessage)
	got = c.deleteRecords(metadata.ConsumerOffsetsTopic, -1)
	t.Logf("compact,delete: %v low watermark %d", kerr.ErrorForCode(got.ErrorCode), got.LowWatermark)
	if got.ErrorCode != kerr.InvalidTopicException.Code {
		t.Errorf("DeleteRecords on __consumer_offsets (compact,delete): %v low watermark %d; Kafka answers INVALID_TOPIC_EXCEPTION", kerr.ErrorForCode(got.ErrorCode), got.LowWatermark)
	}
}

// Kafka refuses a zstd batch in Produce v3-v6 with
// UNSUPPORTED_COMPRESSION_TYPE (ProduceRequest.validateRecords); zstd
// needs v7. The codec bits are in the header, so no codec is needed here.
func TestZstdNeedsProduceV7(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("z", 1)
	b := batch.Build(batch.Spec{
		BaseTimestamp: n.machine.Clock.Now().UnixMilli(), ProducerID: batch.NoProducerID,
		Attributes: batch.CompressionZstd, Records: []batch.Record{{Value: []byte("a")}},
	})
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 6, -1, 30_000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = "z"
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = b
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	answer := c.request(req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
	if answer.ErrorCode != kerr.UnsupportedCompressionType.Code {
		t.Fatalf("zstd batch in Produce v6: %v at offset %d; Kafka answers UNSUPPORTED_COMPRESSION_TYPE", kerr.ErrorForCode(answer.ErrorCode), answer.BaseOffset)
	}
}

// bumpLeaderEpoch moves a single node's partition 0 of topic on by two
// leader epochs, as an election on this same node would: leaderless, then
// led by node 1 again.
func bumpLeaderEpoch(t *testing.T, n *testNode, topic string) {
	t.Helper()
	id := n.broker.image.Topics[topic].ID
	none, self := int32(-1), int32(1)
	committed := false
	n.broker.quorum.Propose([]metadata.Record{
		{PartitionChange: &metadata.PartitionChangeRecord{TopicID: id, Partition: 0, Leader: &none}},
		{PartitionChange: &metadata.PartitionChangeRecord{TopicID: id, Partition: 0, Leader: &self}},
	}, func(_ int64, err error) {
		if err != nil {
			t.Fatalf("proposing a leader change: %v", err)
		}
		committed = true
	})
	n.run(settleTime)
	if !committed {
		t.Fatal("the leader change did not commit")
	}
}

func listOffset(c *testClient, topic string, timestamp int64) kmsg.ListOffsetsResponseTopicPartition {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 10
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = 0, timestamp, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return c.request(req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
}

// Kafka answers ListOffsets with the leader epoch of the batch holding the
// offset it answers (earliest: the epoch cache's first entry; a timestamp
// or -3: batch.partitionLeaderEpoch), not the current leader epoch. Java's
// consumer keeps that epoch as its position's offsetEpoch after a reset or
// offsetsForTimes, and uses it for KIP-320 truncation checks.
func TestListOffsetsAnswersTheEpochThatWroteTheOffset(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("le", 1)
	start := n.machine.Clock.Now().UnixMilli()
	c.produce("le", 0, "a", "b") // epoch 0, offsets 0-1
	bumpLeaderEpoch(t, n, "le")
	n.run(time.Second)
	c.produce("le", 0, "c") // epoch 2, offset 2
	epoch := n.broker.partitions[partitionKey{topic: "le", partition: 0}].LeaderEpoch()
	if epoch == 0 {
		t.Fatal("the leader epoch did not move")
	}

	earliest := listOffset(c, "le", -2)
	byTime := listOffset(c, "le", start)
	latest := listOffset(c, "le", -1)
	if earliest.Offset != 0 || earliest.LeaderEpoch != 0 {
		t.Errorf("earliest: offset %d epoch %d; Kafka answers offset 0 with epoch 0 (the epoch that wrote it)", earliest.Offset, earliest.LeaderEpoch)
	}
	if byTime.Offset != 0 || byTime.LeaderEpoch != 0 {
		t.Errorf("by timestamp: offset %d epoch %d; Kafka answers offset 0 with epoch 0 (its batch's partitionLeaderEpoch)", byTime.Offset, byTime.LeaderEpoch)
	}
	if latest.Offset != 3 || latest.LeaderEpoch != epoch {
		t.Errorf("latest: offset %d epoch %d, want 3 and the current epoch %d", latest.Offset, latest.LeaderEpoch, epoch)
	}
	if none := listOffset(c, "le", n.machine.Clock.Now().UnixMilli()+time.Hour.Milliseconds()); none.Offset != -1 || none.LeaderEpoch != -1 {
		t.Errorf("a timestamp past every record: offset %d epoch %d, want -1 and -1", none.Offset, none.LeaderEpoch)
	}
	// Without tiered storage (UnifiedLog.fetchOffsetByTimestamp).
	if local := listOffset(c, "le", -4); local.ErrorCode != 0 || local.Offset != 0 || local.LeaderEpoch != 0 || local.Timestamp != -1 {
		t.Errorf("earliest local (-4): %+v; Kafka answers the log start 0 with epoch 0", local)
	}
	if tiered := listOffset(c, "le", -5); tiered.ErrorCode != 0 || tiered.Offset != -1 || tiered.LeaderEpoch != -1 || tiered.Timestamp != -1 {
		t.Errorf("latest tiered (-5): %+v; Kafka answers offset -1 with epoch -1", tiered)
	}
}

// Kafka describes every config for null names and for an empty list alike
// (ConfigHelper); some clients send the empty list by default.
func TestDescribeConfigsWithAnEmptyListOfNamesDescribesAll(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("described", 1)
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version = 4
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeTopic, "described"
	r.ConfigNames = []string{} // empty, not null
	req.Resources = append(req.Resources, r)
	resp := c.request(req).(*kmsg.DescribeConfigsResponse)
	got := resp.Resources[0]
	requireNoError(t, "describe", got.ErrorCode, got.ErrorMessage)
	if len(got.Configs) != len(metadata.TopicConfigDefinitions()) {
		t.Fatalf("empty ConfigNames described %d configs, Kafka describes all %d", len(got.Configs), len(metadata.TopicConfigDefinitions()))
	}
}

// Only the metadata log's own name is internal, as in Kafka: a user topic
// whose name merely starts like it is the user's, listed and written.
func TestATopicNamedLikeTheMetadataLogIsTheUsers(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("__cluster_metadata_audit", 1)
	topic := c.metadata("__cluster_metadata_audit").Topics[0]
	requireNoError(t, "metadata", topic.ErrorCode, nil)
	if topic.IsInternal {
		t.Errorf("Metadata reports the user topic __cluster_metadata_audit as internal")
	}
	if _, code := c.tryProduce("__cluster_metadata_audit", 0, "x"); code != 0 {
		t.Errorf("produce to the user topic __cluster_metadata_audit: %v", kerr.ErrorForCode(code))
	}
}

// Without an authorizer Kafka answers a request for authorized operations
// with every operation the resource type supports (KIP-430); Sluice
// answered "omitted", which the Java AdminClient reports as null. The bit
// fields are Kafka's: topic READ..ALTER_CONFIGS (3576), cluster CREATE,
// ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS,
// IDEMPOTENT_WRITE (8096), group READ, DELETE, DESCRIBE (328).
func TestAuthorizedOperationsAreEveryOperationWithoutAnAuthorizer(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	c.createTopic("ops", 1)

	req := kmsg.NewPtrMetadataRequest()
	req.Version = 10
	req.IncludeTopicAuthorizedOperations = true
	req.IncludeClusterAuthorizedOperations = true
	name := "ops"
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = &name
	req.Topics = append(req.Topics, rt)
	resp := c.request(req).(*kmsg.MetadataResponse)
	if got := resp.Topics[0].AuthorizedOperations; got != 3576 {
		t.Errorf("topic operations %d, want 3576", got)
	}
	if resp.AuthorizedOperations != 8096 {
		t.Errorf("cluster operations in Metadata v10 %d, want 8096", resp.AuthorizedOperations)
	}
	req.IncludeTopicAuthorizedOperations = false
	if got := c.request(req).(*kmsg.MetadataResponse).Topics[0].AuthorizedOperations; got != -2147483648 {
		t.Errorf("topic operations not asked for: %d, want the omitted value", got)
	}

	describe := kmsg.NewPtrDescribeClusterRequest()
	describe.Version = 1
	describe.IncludeClusterAuthorizedOperations = true
	cluster := c.request(describe).(*kmsg.DescribeClusterResponse)
	requireNoError(t, "describe cluster", cluster.ErrorCode, cluster.ErrorMessage)
	if cluster.ClusterAuthorizedOperations != 8096 {
		t.Errorf("cluster operations %d, want 8096", cluster.ClusterAuthorizedOperations)
	}

	c.findCoordinator(0, "g")
	n.run(settleTime)
	groups := kmsg.NewPtrDescribeGroupsRequest()
	groups.Version = 5
	groups.Groups = []string{"g"}
	groups.IncludeAuthorizedOperations = true
	described := c.request(groups).(*kmsg.DescribeGroupsResponse).Groups[0]
	requireNoError(t, "describe groups", described.ErrorCode, nil)
	if described.AuthorizedOperations != 328 {
		t.Errorf("group operations %d, want 328", described.AuthorizedOperations)
	}
}

// Kafka refuses an InitProducerId naming a producer id without an epoch,
// or the reverse, and an empty transactional id, with INVALID_REQUEST;
// the version-0 default (no id, no epoch) and a pair both given (KIP-360)
// get a new id.
func TestInitProducerIDRefusesHalfAPair(t *testing.T) {
	n := newTestNode(t, DefaultConfig())
	c := n.connect()
	init := func(id int64, epoch int16, transactionalID *string) *kmsg.InitProducerIDResponse {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.Version = 4
		req.ProducerID, req.ProducerEpoch, req.TransactionalID = id, epoch, transactionalID
		return c.request(req).(*kmsg.InitProducerIDResponse)
	}
	requireError(t, "id without epoch", init(7, -1, nil).ErrorCode, nil, kerr.InvalidRequest)
	requireError(t, "epoch without id", init(-1, 3, nil).ErrorCode, nil, kerr.InvalidRequest)
	empty, named := "", "tx"
	requireError(t, "empty transactional id", init(-1, -1, &empty).ErrorCode, nil, kerr.InvalidRequest)
	requireError(t, "transactional id", init(-1, -1, &named).ErrorCode, nil, kerr.TransactionalIDAuthorizationFailed)
	fresh := init(-1, -1, nil)
	requireNoError(t, "fresh", fresh.ErrorCode, nil)
	bumped := init(fresh.ProducerID, fresh.ProducerEpoch, nil)
	requireNoError(t, "a pair both given", bumped.ErrorCode, nil)
	if bumped.ProducerID == fresh.ProducerID || bumped.ProducerEpoch != 0 {
		t.Errorf("a pair both given got id %d epoch %d; want a new id at epoch 0 (as Kafka, without a transactional id)", bumped.ProducerID, bumped.ProducerEpoch)
	}
}
