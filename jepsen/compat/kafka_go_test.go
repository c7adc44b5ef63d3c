package compat

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
)

const (
	// kafkaGoBatchTimeout is how long kafka-go's Writer lingers for a
	// batch to fill; its default of a second would make each sync write
	// wait that long for nothing.
	kafkaGoBatchTimeout = 5 * time.Millisecond
	// kafkaGoFetchBytesMax is the Reader's MaxBytes: above the large
	// record, which a kafka-go Reader cannot read past otherwise.
	kafkaGoFetchBytesMax = 10 << 20
)

// TestKafkaGoRoundTrip: segmentio/kafka-go's Writer (not idempotent: the
// library has no idempotent producer) with acks=all and its Hash balancer
// (FNV-1a, like sarama), one Reader per partition without a group, Conn's
// ReadFirstOffset/ReadLastOffset, and Client for the admin steps.
func TestKafkaGoRoundTrip(t *testing.T) {
	broker := StartBroker(t, Options{})
	runRoundTrip(t, "kafka-go", broker, &kafkaGoClient{address: broker.Addr()})
}

type kafkaGoClient struct{ address string }

func (c *kafkaGoClient) codecs() []string { return codecsAll }

// readsEmptyAsNull: kafka-go's Reader decodes a zero-length key, value or
// header value as nil (message_reader.go reads bytes only when the length
// is positive), so it cannot tell empty from null. Its Writer does send
// them apart, which the stored-bytes step checks.
func (c *kafkaGoClient) readsEmptyAsNull() {}

func (c *kafkaGoClient) createTopic(t *testing.T, topic string) {
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	client := &kafka.Client{Addr: kafka.TCP(c.address), Timeout: clientTimeout}
	created, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{
		Topics: []kafka.TopicConfig{{Topic: topic, NumPartitions: roundTripPartitions, ReplicationFactor: 1}},
	})
	if err == nil {
		err = created.Errors[topic]
	}
	if err != nil {
		t.Fatalf("CreateTopics %q: %v", topic, err)
	}
	metadata, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		t.Fatalf("Metadata: %v", err)
	}
	if len(metadata.Topics) != 1 || metadata.Topics[0].Error != nil {
		t.Fatalf("Metadata for %q: %+v", topic, metadata.Topics)
	}
	if got := len(metadata.Topics[0].Partitions); got != roundTripPartitions {
		t.Fatalf("metadata lists %d partitions, want %d", got, roundTripPartitions)
	}
	for _, p := range metadata.Topics[0].Partitions {
		if p.Error != nil || p.Leader.ID < 0 {
			t.Errorf("partition %d: leader %d, error %v", p.ID, p.Leader.ID, p.Error)
		}
	}
}

// produce writes each codec's records with a Writer compressing with that
// codec. WriteMessages does not say where each message went; the Writer's
// Completion callback does, per batch.
func (c *kafkaGoClient) produce(t *testing.T, topic string, plan []plannedRecord) []producedRecord {
	var mutex sync.Mutex
	landed := map[string]kafka.Message{}
	var produced []producedRecord
	for _, group := range groupByCodec(plan) {
		writer := &kafka.Writer{
			Addr:                   kafka.TCP(c.address),
			Topic:                  topic,
			Balancer:               &kafka.Hash{},
			RequiredAcks:           kafka.RequireAll,
			Compression:            kafkaGoCodec(t, group[0].Codec),
			BatchTimeout:           kafkaGoBatchTimeout,
			AllowAutoTopicCreation: false,
			Completion: func(messages []kafka.Message, err error) {
				if err != nil {
					return
				}
				mutex.Lock()
				defer mutex.Unlock()
				for _, m := range messages {
					landed[kafkaGoRecord(m).String()] = m
				}
			},
		}
		messages := make([]kafka.Message, len(group))
		for i, r := range group {
			messages[i] = kafka.Message{Key: r.Key, Value: r.Value}
			for _, h := range r.Headers {
				messages[i].Headers = append(messages[i].Headers, kafka.Header{Key: h.Key, Value: h.Value})
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
		err := writer.WriteMessages(ctx, messages...)
		cancel()
		if closeErr := writer.Close(); err == nil {
			err = closeErr
		}
		if err != nil {
			t.Fatalf("WriteMessages with %s: %v", group[0].Codec, err)
		}
		mutex.Lock()
		for _, r := range group {
			m, ok := landed[r.String()]
			if !ok {
				t.Fatalf("no completion for %s", r.String())
			}
			produced = append(produced, producedRecord{record: r.record, Partition: int32(m.Partition), Offset: m.Offset})
		}
		mutex.Unlock()
	}
	return produced
}

func kafkaGoCodec(t *testing.T, codec string) kafka.Compression {
	switch codec {
	case codecNone:
		return 0
	case codecGzip:
		return kafka.Gzip
	case codecSnappy:
		return kafka.Snappy
	case codecLz4:
		return kafka.Lz4
	case codecZstd:
		return kafka.Zstd
	}
	t.Fatalf("unknown codec %q", codec)
	panic("unreachable")
}

// kafkaGoRecord is a kafka-go message as this package's record.
func kafkaGoRecord(m kafka.Message) record {
	r := record{Key: m.Key, Value: m.Value}
	for _, h := range m.Headers {
		r.Headers = append(r.Headers, header{Key: h.Key, Value: h.Value})
	}
	return r
}

// consume runs one Reader per partition (Partition set, no GroupID) from
// offset 0 and collects until count records have arrived.
func (c *kafkaGoClient) consume(t *testing.T, topic string, count int) []consumedRecord {
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	type delivery struct {
		message kafka.Message
		err     error
	}
	deliveries := make(chan delivery)
	var readers sync.WaitGroup
	defer readers.Wait()
	defer cancel()
	for partition := range roundTripPartitions {
		reader := kafka.NewReader(kafka.ReaderConfig{
			Brokers:   []string{c.address},
			Topic:     topic,
			Partition: partition,
			MinBytes:  1,
			MaxBytes:  kafkaGoFetchBytesMax,
			MaxWait:   100 * time.Millisecond,
		})
		if err := reader.SetOffset(0); err != nil {
			t.Fatalf("SetOffset: %v", err)
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			defer reader.Close()
			for {
				m, err := reader.ReadMessage(ctx)
				select {
				case deliveries <- delivery{message: m, err: err}:
				case <-ctx.Done():
					return
				}
				if err != nil {
					return
				}
			}
		}()
	}
	var consumed []consumedRecord
	for len(consumed) < count {
		select {
		case d := <-deliveries:
			if d.err != nil {
				if errors.Is(d.err, context.DeadlineExceeded) {
					continue // reported below, once
				}
				t.Fatalf("ReadMessage: %v", d.err)
			}
			consumed = append(consumed, consumedRecord{record: kafkaGoRecord(d.message), Partition: int32(d.message.Partition), Offset: d.message.Offset})
		case <-ctx.Done():
			t.Errorf("after %v, read %d of %d records", clientTimeout, len(consumed), count)
			return consumed
		}
	}
	return consumed
}

// listOffsets asks each partition's leader through kafka-go's Conn.
func (c *kafkaGoClient) listOffsets(t *testing.T, topic string) (earliest, latest map[int32]int64) {
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	earliest, latest = map[int32]int64{}, map[int32]int64{}
	for partition := range int32(roundTripPartitions) {
		conn, err := kafka.DialLeader(ctx, "tcp", c.address, topic, int(partition))
		if err != nil {
			t.Fatalf("DialLeader %d: %v", partition, err)
		}
		first, firstErr := conn.ReadFirstOffset()
		last, lastErr := conn.ReadLastOffset()
		conn.Close()
		if firstErr != nil || lastErr != nil {
			t.Fatalf("partition %d: ReadFirstOffset: %v, ReadLastOffset: %v", partition, firstErr, lastErr)
		}
		earliest[partition], latest[partition] = first, last
	}
	return earliest, latest
}

// hash is kafka-go's Hash balancer (FNV-1a, as sarama); null keys go
// round-robin.
func (c *kafkaGoClient) hash(key []byte, partitions int32) (int32, bool) {
	if key == nil {
		return 0, false
	}
	all := make([]int, partitions)
	for i := range all {
		all[i] = i
	}
	return int32((&kafka.Hash{}).Balance(kafka.Message{Key: key}, all...)), true
}
