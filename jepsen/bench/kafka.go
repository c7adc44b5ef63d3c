package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// KafkaOptions configure the franz-go (kgo) clients of a run. `sluice
// bench` and the peers harness both build their clients from these, so
// Sluice and kfake are driven by byte-for-byte the same client settings.
type KafkaOptions struct {
	// Brokers are the bootstrap addresses.
	Brokers []string
	// Topic is created if missing with Partitions partitions (-1: the
	// broker's default), ReplicationFactor replicas (-1: the broker's
	// default) and TopicConfigs.
	Topic             string
	Partitions        int32
	ReplicationFactor int16
	TopicConfigs      map[string]string
	// Keys is how many distinct keys records cycle through; 0 sends
	// unkeyed records, which kgo spreads with its sticky partitioner
	// (a whole batch to one partition, then the next).
	Keys int
	// Acks is all (idempotent, as Kafka's producers default to), 1 or 0.
	Acks string
	// Compression is none, gzip, snappy, lz4 or zstd.
	Compression string
	// Linger is how long a partition's batch waits for more records
	// (kgo's ProducerLinger; Java's linger.ms). 0 sends as soon as a
	// connection is free; records arriving meanwhile batch up anyway.
	Linger time.Duration
	// PendingMax bounds records produced and not yet acknowledged, per
	// client (kgo's MaxBufferedRecords).
	PendingMax int
}

// Bounds of KafkaOptions.
const (
	// kafkaKeysMax bounds the distinct keys a run cycles through; they
	// are built once up front.
	kafkaKeysMax = 1 << 20
	// kafkaPartitionsMax bounds the partitions of a benchmark topic.
	kafkaPartitionsMax = 10_000
	// lingerMax bounds the linger setting.
	lingerMax = 10 * time.Second
	// topicReadyPoll is the interval between attempts to create a topic
	// on a cluster that is still forming.
	topicReadyPoll = 100 * time.Millisecond
)

// Validate reports the first bad option, if any.
func (o KafkaOptions) Validate() error {
	switch {
	case len(o.Brokers) == 0:
		return errors.New("no bootstrap brokers")
	case o.Topic == "":
		return errors.New("no topic")
	case o.Partitions == 0 || o.Partitions < -1 || o.Partitions > kafkaPartitionsMax:
		return fmt.Errorf("partitions %d: want -1 (the broker's default) or 1 to %d", o.Partitions, kafkaPartitionsMax)
	case o.ReplicationFactor == 0 || o.ReplicationFactor < -1:
		return fmt.Errorf("replication factor %d: want -1 (the broker's default) or at least 1", o.ReplicationFactor)
	case o.Keys < 0 || o.Keys > kafkaKeysMax:
		return fmt.Errorf("keys %d: want 0 (unkeyed) to %d", o.Keys, kafkaKeysMax)
	case o.Linger < 0 || o.Linger > lingerMax:
		return fmt.Errorf("linger %v: want 0 to %v", o.Linger, lingerMax)
	case o.PendingMax < 1 || o.PendingMax > PendingMax:
		return fmt.Errorf("pending records %d: want 1 to %d", o.PendingMax, PendingMax)
	}
	if _, err := acksOptions(o.Acks); err != nil {
		return err
	}
	_, err := CompressionCodec(o.Compression)
	return err
}

func acksOptions(acks string) ([]kgo.Opt, error) {
	switch acks {
	case "all", "-1":
		return []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks())}, nil
	case "1":
		return []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()}, nil
	case "0":
		return []kgo.Opt{kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite()}, nil
	}
	return nil, fmt.Errorf("acks %q: want all, 1 or 0", acks)
}

// CompressionCodec is franz-go's codec for compression.type's name
// (none or empty for none).
func CompressionCodec(name string) (kgo.CompressionCodec, error) {
	switch name {
	case "none", "":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.NoCompression(), fmt.Errorf("compression %q: want none, gzip, snappy, lz4 or zstd", name)
}

// EnsureTopic creates the topic unless it exists, retrying while the
// cluster is still forming (brokers not yet registered, no controller),
// and returns once every partition has a leader, or ctx ends.
func EnsureTopic(ctx context.Context, options KafkaOptions) error {
	if err := options.Validate(); err != nil {
		return err
	}
	configs := map[string]*string{}
	for key, value := range options.TopicConfigs {
		configs[key] = &value
	}
	var lastError error
	for {
		// A fresh client each attempt: a client keeps the broker list it
		// learned first, perhaps from a node that knew only itself.
		lastError = tryEnsureTopic(ctx, options, configs)
		if lastError == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s not ready: %w", options.Topic, lastError)
		case <-time.After(topicReadyPoll):
		}
	}
}

func tryEnsureTopic(ctx context.Context, options KafkaOptions, configs map[string]*string) error {
	client, err := kgo.NewClient(kgo.SeedBrokers(options.Brokers...))
	if err != nil {
		return err
	}
	defer client.Close()
	admin := kadm.NewClient(client)
	created, err := admin.CreateTopic(ctx, options.Partitions, options.ReplicationFactor, configs, options.Topic)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		// kadm's CreateTopic returns the topic's own error here too.
		return err
	}
	if created.Err != nil && !errors.Is(created.Err, kerr.TopicAlreadyExists) {
		return created.Err
	}
	metadata, err := admin.Metadata(ctx, options.Topic)
	if err != nil {
		return err
	}
	topic, ok := metadata.Topics[options.Topic]
	switch {
	case !ok:
		return fmt.Errorf("topic %s missing from metadata", options.Topic)
	case topic.Err != nil:
		return topic.Err
	case len(topic.Partitions) == 0:
		return fmt.Errorf("topic %s has no partitions yet", options.Topic)
	}
	for _, partition := range topic.Partitions {
		if partition.Err != nil {
			return fmt.Errorf("partition %d: %w", partition.Partition, partition.Err)
		}
		if partition.Leader < 0 {
			return fmt.Errorf("partition %d has no leader yet", partition.Partition)
		}
	}
	return nil
}

// CountRecords is how many records the topic holds: the sum over its
// partitions of end minus start offset.
func CountRecords(ctx context.Context, options KafkaOptions) (int64, error) {
	client, err := kgo.NewClient(kgo.SeedBrokers(options.Brokers...))
	if err != nil {
		return 0, err
	}
	defer client.Close()
	admin := kadm.NewClient(client)
	starts, err := admin.ListStartOffsets(ctx, options.Topic)
	if err != nil {
		return 0, err
	}
	ends, err := admin.ListEndOffsets(ctx, options.Topic)
	if err != nil {
		return 0, err
	}
	if err := starts.Error(); err != nil {
		return 0, err
	}
	if err := ends.Error(); err != nil {
		return 0, err
	}
	var total int64
	ends.Each(func(end kadm.ListedOffset) {
		if start, ok := starts.Lookup(end.Topic, end.Partition); ok {
			total += end.Offset - start.Offset
		}
	})
	return total, nil
}

// kafkaSender is one kgo client producing to the topic.
type kafkaSender struct {
	client *kgo.Client
	topic  string
	keys   [][]byte
}

// NewKafkaSender opens one producing client with options' settings. Its
// connections open lazily; the warm-up absorbs that.
func NewKafkaSender(options KafkaOptions) (Sender, error) {
	if err := options.Validate(); err != nil {
		return nil, err
	}
	acks, _ := acksOptions(options.Acks)
	codec, _ := CompressionCodec(options.Compression)
	clientOptions := append([]kgo.Opt{
		kgo.SeedBrokers(options.Brokers...),
		kgo.DefaultProduceTopic(options.Topic),
		kgo.ProducerBatchCompression(codec),
		kgo.ProducerLinger(options.Linger),
		kgo.MaxBufferedRecords(options.PendingMax),
	}, acks...)
	client, err := kgo.NewClient(clientOptions...)
	if err != nil {
		return nil, err
	}
	sender := &kafkaSender{client: client, topic: options.Topic}
	for i := range options.Keys {
		sender.keys = append(sender.keys, []byte("key-"+strconv.Itoa(i)))
	}
	return sender, nil
}

func (s *kafkaSender) Send(ctx context.Context, sequence int64, value []byte, done func(error)) {
	record := &kgo.Record{Topic: s.topic, Value: value}
	if len(s.keys) > 0 {
		record.Key = s.keys[sequence%int64(len(s.keys))]
	}
	s.client.Produce(ctx, record, func(_ *kgo.Record, err error) { done(err) })
}

func (s *kafkaSender) Flush(ctx context.Context) error { return s.client.Flush(ctx) }

func (s *kafkaSender) Close() { s.client.Close() }

// kafkaReceiver is one kgo client consuming every partition of the topic.
type kafkaReceiver struct {
	client *kgo.Client
}

// NewKafkaReceiver opens a consuming client (no group) at the start of
// every partition, or at the end when fromEnd is set.
func NewKafkaReceiver(options KafkaOptions, fromEnd bool) (Receiver, error) {
	if len(options.Brokers) == 0 || options.Topic == "" {
		return nil, errors.New("a receiver needs bootstrap brokers and a topic")
	}
	start := kgo.NewOffset().AtStart()
	if fromEnd {
		start = kgo.NewOffset().AtEnd()
	}
	client, err := kgo.NewClient(
		kgo.SeedBrokers(options.Brokers...),
		kgo.ConsumeTopics(options.Topic),
		kgo.ConsumeResetOffset(start),
	)
	if err != nil {
		return nil, err
	}
	return &kafkaReceiver{client: client}, nil
}

func (r *kafkaReceiver) Receive(ctx context.Context, deliver func(value []byte)) error {
	for {
		fetches := r.client.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		for _, fetchError := range fetches.Errors() {
			if !errors.Is(fetchError.Err, context.Canceled) && !errors.Is(fetchError.Err, context.DeadlineExceeded) {
				return fmt.Errorf("fetching %s[%d]: %w", fetchError.Topic, fetchError.Partition, fetchError.Err)
			}
		}
		fetches.EachRecord(func(record *kgo.Record) { deliver(record.Value) })
	}
}

func (r *kafkaReceiver) Close() { r.client.Close() }
