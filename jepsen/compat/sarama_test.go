package compat

import (
	"testing"
	"time"

	"github.com/IBM/sarama"
)

// TestSaramaRoundTrip: IBM/sarama as a Kafka 4.0 client, idempotent
// producer (which requires acks=all and one request in flight), its
// default FNV-1a hash partitioner, partition consumers without a group.
func TestSaramaRoundTrip(t *testing.T) {
	broker := StartBroker(t, Options{})
	runRoundTrip(t, "sarama", broker, &saramaClient{address: broker.Addr()})
}

type saramaClient struct{ address string }

func (c *saramaClient) codecs() []string { return codecsAll }

// saramaConfig is the configuration every sarama client here uses.
func saramaConfig(codec sarama.CompressionCodec) *sarama.Config {
	config := sarama.NewConfig()
	config.ClientID = clientID
	config.Version = sarama.V4_0_0_0
	config.Net.MaxOpenRequests = 1
	config.Net.DialTimeout = clientTimeout
	config.Net.ReadTimeout = clientTimeout
	config.Net.WriteTimeout = clientTimeout
	config.Metadata.AllowAutoTopicCreation = false
	config.Producer.Idempotent = true
	config.Producer.RequiredAcks = sarama.WaitForAll
	config.Producer.Return.Successes = true
	config.Producer.Return.Errors = true
	config.Producer.Compression = codec
	config.Producer.Retry.Backoff = 50 * time.Millisecond
	config.Consumer.Return.Errors = true
	return config
}

func (c *saramaClient) createTopic(t *testing.T, topic string) {
	admin, err := sarama.NewClusterAdmin([]string{c.address}, saramaConfig(sarama.CompressionNone))
	if err != nil {
		t.Fatalf("sarama.NewClusterAdmin: %v", err)
	}
	defer admin.Close()
	detail := &sarama.TopicDetail{NumPartitions: roundTripPartitions, ReplicationFactor: 1}
	if err := admin.CreateTopic(topic, detail, false); err != nil {
		t.Fatalf("CreateTopic %q: %v", topic, err)
	}
	described, err := admin.DescribeTopics([]string{topic})
	if err != nil {
		t.Fatalf("DescribeTopics: %v", err)
	}
	if len(described) != 1 || described[0].Err != sarama.ErrNoError {
		t.Fatalf("DescribeTopics %q: %+v", topic, described)
	}
	if got := len(described[0].Partitions); got != roundTripPartitions {
		t.Fatalf("metadata lists %d partitions, want %d", got, roundTripPartitions)
	}
	for _, p := range described[0].Partitions {
		if p.Err != sarama.ErrNoError || p.Leader < 0 {
			t.Errorf("partition %d: leader %d, error %v", p.ID, p.Leader, p.Err)
		}
	}
}

// produce sends each codec's records through a SyncProducer configured
// with that codec; SendMessages fills in each message's partition and
// offset.
func (c *saramaClient) produce(t *testing.T, topic string, plan []plannedRecord) []producedRecord {
	var produced []producedRecord
	for _, group := range groupByCodec(plan) {
		producer, err := sarama.NewSyncProducer([]string{c.address}, saramaConfig(saramaCodec(t, group[0].Codec)))
		if err != nil {
			t.Fatalf("sarama.NewSyncProducer: %v", err)
		}
		messages := make([]*sarama.ProducerMessage, len(group))
		for i, r := range group {
			message := &sarama.ProducerMessage{Topic: topic}
			if r.Key != nil {
				message.Key = sarama.ByteEncoder(r.Key)
			}
			if r.Value != nil {
				message.Value = sarama.ByteEncoder(r.Value)
			}
			for _, h := range r.Headers {
				message.Headers = append(message.Headers, sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
			}
			messages[i] = message
		}
		err = producer.SendMessages(messages)
		producer.Close()
		if err != nil {
			t.Fatalf("SendMessages with %s: %v", group[0].Codec, err)
		}
		for i, m := range messages {
			produced = append(produced, producedRecord{record: group[i].record, Partition: m.Partition, Offset: m.Offset})
		}
	}
	return produced
}

func saramaCodec(t *testing.T, codec string) sarama.CompressionCodec {
	switch codec {
	case codecNone:
		return sarama.CompressionNone
	case codecGzip:
		return sarama.CompressionGZIP
	case codecSnappy:
		return sarama.CompressionSnappy
	case codecLz4:
		return sarama.CompressionLZ4
	case codecZstd:
		return sarama.CompressionZSTD
	}
	t.Fatalf("unknown codec %q", codec)
	panic("unreachable")
}

// consume runs one PartitionConsumer per partition from the oldest
// offset and collects until count records have arrived.
func (c *saramaClient) consume(t *testing.T, topic string, count int) []consumedRecord {
	consumer, err := sarama.NewConsumer([]string{c.address}, saramaConfig(sarama.CompressionNone))
	if err != nil {
		t.Fatalf("sarama.NewConsumer: %v", err)
	}
	defer consumer.Close()
	messages := make(chan *sarama.ConsumerMessage)
	errors := make(chan *sarama.ConsumerError)
	done := make(chan struct{})
	defer close(done)
	for partition := range int32(roundTripPartitions) {
		partitionConsumer, err := consumer.ConsumePartition(topic, partition, sarama.OffsetOldest)
		if err != nil {
			t.Fatalf("ConsumePartition %d: %v", partition, err)
		}
		defer partitionConsumer.AsyncClose()
		go forwardSarama(partitionConsumer, messages, errors, done)
	}
	timeout := time.NewTimer(clientTimeout)
	defer timeout.Stop()
	var consumed []consumedRecord
	for len(consumed) < count {
		select {
		case m := <-messages:
			got := consumedRecord{record: record{Key: m.Key, Value: m.Value}, Partition: m.Partition, Offset: m.Offset}
			for _, h := range m.Headers {
				got.Headers = append(got.Headers, header{Key: string(h.Key), Value: h.Value})
			}
			consumed = append(consumed, got)
		case err := <-errors:
			t.Fatalf("partition consumer: %v", err)
		case <-timeout.C:
			t.Errorf("after %v, read %d of %d records", clientTimeout, len(consumed), count)
			return consumed
		}
	}
	return consumed
}

// forwardSarama funnels one partition consumer into shared channels, in
// the order it delivers, until the test stops listening.
func forwardSarama(pc sarama.PartitionConsumer, messages chan<- *sarama.ConsumerMessage, errors chan<- *sarama.ConsumerError, done <-chan struct{}) {
	for {
		select {
		case m, ok := <-pc.Messages():
			if !ok {
				return
			}
			select {
			case messages <- m:
			case <-done:
				return
			}
		case err, ok := <-pc.Errors():
			if !ok {
				return
			}
			select {
			case errors <- err:
			case <-done:
				return
			}
		case <-done:
			return
		}
	}
}

func (c *saramaClient) listOffsets(t *testing.T, topic string) (earliest, latest map[int32]int64) {
	client, err := sarama.NewClient([]string{c.address}, saramaConfig(sarama.CompressionNone))
	if err != nil {
		t.Fatalf("sarama.NewClient: %v", err)
	}
	defer client.Close()
	earliest, latest = map[int32]int64{}, map[int32]int64{}
	for partition := range int32(roundTripPartitions) {
		if earliest[partition], err = client.GetOffset(topic, partition, sarama.OffsetOldest); err != nil {
			t.Fatalf("GetOffset oldest %d: %v", partition, err)
		}
		if latest[partition], err = client.GetOffset(topic, partition, sarama.OffsetNewest); err != nil {
			t.Fatalf("GetOffset newest %d: %v", partition, err)
		}
	}
	return earliest, latest
}

// hash is sarama's default HashPartitioner (FNV-1a); null keys go to a
// random partition.
func (c *saramaClient) hash(key []byte, partitions int32) (int32, bool) {
	if key == nil {
		return 0, false
	}
	partition, err := sarama.NewHashPartitioner(roundTripTopic).Partition(&sarama.ProducerMessage{Key: sarama.ByteEncoder(key)}, partitions)
	if err != nil {
		panic("sarama hash partitioner: " + err.Error())
	}
	return partition, true
}
