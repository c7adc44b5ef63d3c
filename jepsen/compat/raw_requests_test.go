package compat

import (
	"encoding/binary"
	"hash/crc32"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Hand-built requests for tests that must control every byte, sent with
// RoundTrip (wire.go) on a connection of their own.

const (
	// The versions the hand-built requests use: current ones, flexible.
	rawCreateTopicsVersion = 7
	rawProduceVersion      = 9
	rawFetchVersion        = 12
	rawListOffsetsVersion  = 7
	// RecordBatch v2 layout: FirstOffset (8 bytes), Length (4),
	// PartitionLeaderEpoch (4), Magic (1), CRC (4), then Attributes to
	// the end, which the CRC covers. Length counts what follows it.
	legacyMagic     = 1
	batchMagic      = 2
	batchLengthAt   = 8
	batchLengthFrom = 12
	batchMagicAt    = 16
	batchCRCAt      = 17
	batchCRCFrom    = 21
)

// castagnoli is the CRC-32C table RecordBatch v2 checksums use.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// dialBroker connects to the broker; the connection closes when the test
// ends.
func dialBroker(t *testing.T, address string) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", address, probeTimeout)
	if err != nil {
		t.Fatalf("dial %s: %v", address, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// rawCreateTopics creates each topic with the given partition count.
func rawCreateTopics(t *testing.T, address string, partitions int32, topics ...string) {
	t.Helper()
	conn := dialBroker(t, address)
	req := kmsg.NewPtrCreateTopicsRequest()
	req.SetVersion(rawCreateTopicsVersion)
	req.TimeoutMillis = int32(clientTimeout.Milliseconds())
	for _, topic := range topics {
		requestTopic := kmsg.NewCreateTopicsRequestTopic()
		requestTopic.Topic = topic
		requestTopic.NumPartitions = partitions
		requestTopic.ReplicationFactor = 1
		req.Topics = append(req.Topics, requestTopic)
	}
	resp, err := RoundTrip(conn, req, 1, clientTimeout)
	if err != nil {
		t.Fatalf("create topics: %v", err)
	}
	answered := resp.(*kmsg.CreateTopicsResponse).Topics
	if len(answered) != len(topics) {
		t.Fatalf("create topics answered %d topics, want %d", len(answered), len(topics))
	}
	for _, topic := range answered {
		if topic.ErrorCode != 0 {
			t.Fatalf("create topic %q: %v", topic.Topic, kerr.ErrorForCode(topic.ErrorCode))
		}
	}
}

// rawProduce sends batch to partition 0 of topic with acks=all and
// returns the partition's error code.
func rawProduce(t *testing.T, address, topic string, batch []byte) int16 {
	t.Helper()
	conn := dialBroker(t, address)
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(rawProduceVersion)
	req.Acks = -1
	req.TimeoutMillis = int32(clientTimeout.Milliseconds())
	partition := kmsg.NewProduceRequestTopicPartition()
	partition.Partition = 0
	partition.Records = batch
	requestTopic := kmsg.NewProduceRequestTopic()
	requestTopic.Topic = topic
	requestTopic.Partitions = []kmsg.ProduceRequestTopicPartition{partition}
	req.Topics = []kmsg.ProduceRequestTopic{requestTopic}
	resp, err := RoundTrip(conn, req, 1, clientTimeout)
	if err != nil {
		t.Fatalf("produce: %v", err)
	}
	topics := resp.(*kmsg.ProduceResponse).Topics
	if len(topics) != 1 || len(topics[0].Partitions) != 1 {
		t.Fatalf("produce answer has %d topics, want 1 with 1 partition: %+v", len(topics), topics)
	}
	return topics[0].Partitions[0].ErrorCode
}

// rawFetch reads partition 0 of topic from offset 0 and returns its high
// watermark and record bytes.
func rawFetch(t *testing.T, address, topic string) (int64, []byte) {
	t.Helper()
	conn := dialBroker(t, address)
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(rawFetchVersion)
	req.ReplicaID = -1
	req.MaxWaitMillis = 0
	req.MinBytes = 0
	req.MaxBytes = 1 << 20
	partition := kmsg.NewFetchRequestTopicPartition()
	partition.Partition = 0
	partition.FetchOffset = 0
	partition.PartitionMaxBytes = 1 << 20
	partition.CurrentLeaderEpoch = -1
	requestTopic := kmsg.NewFetchRequestTopic()
	requestTopic.Topic = topic
	requestTopic.Partitions = []kmsg.FetchRequestTopicPartition{partition}
	req.Topics = []kmsg.FetchRequestTopic{requestTopic}
	resp, err := RoundTrip(conn, req, 1, clientTimeout)
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	fetch := resp.(*kmsg.FetchResponse)
	if fetch.ErrorCode != 0 || len(fetch.Topics) != 1 || len(fetch.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch answer: error %v, topics %+v", kerr.ErrorForCode(fetch.ErrorCode), fetch.Topics)
	}
	answer := fetch.Topics[0].Partitions[0]
	if answer.ErrorCode != 0 {
		t.Fatalf("fetch %s/0: %v", topic, kerr.ErrorForCode(answer.ErrorCode))
	}
	return answer.HighWatermark, answer.RecordBatches
}

// rawListOffsets asks partition 0 of topic for its earliest and latest
// offsets.
func rawListOffsets(t *testing.T, address, topic string) (earliest, latest int64) {
	t.Helper()
	conn := dialBroker(t, address)
	ask := func(correlation int32, timestamp int64) int64 {
		req := kmsg.NewPtrListOffsetsRequest()
		req.SetVersion(rawListOffsetsVersion)
		req.ReplicaID = -1
		partition := kmsg.NewListOffsetsRequestTopicPartition()
		partition.Partition = 0
		partition.Timestamp = timestamp
		partition.CurrentLeaderEpoch = -1
		requestTopic := kmsg.NewListOffsetsRequestTopic()
		requestTopic.Topic = topic
		requestTopic.Partitions = []kmsg.ListOffsetsRequestTopicPartition{partition}
		req.Topics = []kmsg.ListOffsetsRequestTopic{requestTopic}
		resp, err := RoundTrip(conn, req, correlation, clientTimeout)
		if err != nil {
			t.Fatalf("list offsets: %v", err)
		}
		topics := resp.(*kmsg.ListOffsetsResponse).Topics
		if len(topics) != 1 || len(topics[0].Partitions) != 1 || topics[0].Partitions[0].ErrorCode != 0 {
			t.Fatalf("list offsets answer: %+v", topics)
		}
		return topics[0].Partitions[0].Offset
	}
	return ask(1, -2), ask(2, -1)
}

// validBatch is a correct RecordBatch v2 of two records, not idempotent,
// built by hand so that the tests can break exactly one thing in it.
func validBatch() []byte {
	var records []byte
	for i, value := range []string{"first", "second"} {
		r := kmsg.NewRecord()
		r.OffsetDelta = int32(i)
		r.Key = []byte("key")
		r.Value = []byte(value)
		withoutLength := r.AppendTo(nil) // Length 0 is one varint byte
		r.Length = int32(len(withoutLength) - 1)
		records = r.AppendTo(records)
	}
	batch := kmsg.NewRecordBatch()
	batch.FirstOffset = 0
	batch.PartitionLeaderEpoch = -1
	batch.Magic = batchMagic
	batch.LastOffsetDelta = 1
	batch.FirstTimestamp = time.Now().UnixMilli()
	batch.MaxTimestamp = batch.FirstTimestamp
	batch.ProducerID = -1
	batch.ProducerEpoch = -1
	batch.FirstSequence = -1
	batch.NumRecords = 2
	batch.Records = records
	encoded := batch.AppendTo(nil)
	binary.BigEndian.PutUint32(encoded[batchLengthAt:], uint32(len(encoded)-batchLengthFrom))
	binary.BigEndian.PutUint32(encoded[batchCRCAt:], crc32.Checksum(encoded[batchCRCFrom:], castagnoli))
	return encoded
}

// legacyMessageSet is one message in the magic 1 format Kafka used before
// 0.11 (offset, size, then CRC-32 over magic to the end), which produce v3
// and later may not carry.
func legacyMessageSet() []byte {
	var message []byte
	message = append(message, legacyMagic, 0) // magic, attributes
	message = binary.BigEndian.AppendUint64(message, uint64(time.Now().UnixMilli()))
	message = binary.BigEndian.AppendUint32(message, 3)
	message = append(message, "key"...)
	message = binary.BigEndian.AppendUint32(message, 5)
	message = append(message, "value"...)
	withCRC := binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(message))
	withCRC = append(withCRC, message...)
	set := binary.BigEndian.AppendUint64(nil, 0) // offset
	set = binary.BigEndian.AppendUint32(set, uint32(len(withCRC)))
	return append(set, withCRC...)
}
