package compat

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestFranzGoRoundTrip: franz-go's kgo with its defaults (idempotent,
// acks=all, murmur2 partitioning like the Java client), kadm for the
// admin steps.
func TestFranzGoRoundTrip(t *testing.T) {
	broker := StartBroker(t, Options{})
	runRoundTrip(t, "franz-go", broker, &franzGoClient{address: broker.Addr()})
}

type franzGoClient struct{ address string }

func (c *franzGoClient) codecs() []string { return codecsAll }

// newFranzGoClient is a kgo client of the broker at address, closed when
// the test ends. It pings the broker first: kgo retries a broker it cannot
// talk to for as long as a request allows, so without the ping a broken
// handshake would show only as a timeout, not as its cause.
func newFranzGoClient(t testing.TB, address string, options ...kgo.Opt) *kgo.Client {
	t.Helper()
	client, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(address)}, options...)...)
	if err != nil {
		t.Fatalf("kgo.NewClient: %v", err)
	}
	t.Cleanup(client.Close)
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	if err := client.Ping(ctx); err != nil {
		t.Fatalf("kgo cannot talk to the broker at %s: %v", address, err)
	}
	return client
}

// createTopicWithFranzGo creates topic through kadm and checks its
// metadata: partitions 0..n-1, each led by a broker.
func createTopicWithFranzGo(t testing.TB, address, topic string, partitions int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	admin := kadm.NewClient(newFranzGoClient(t, address))
	created, err := admin.CreateTopic(ctx, partitions, 1, nil, topic)
	if err == nil {
		err = created.Err
	}
	if err != nil {
		t.Fatalf("kadm CreateTopic %q: %v", topic, err)
	}
	details, err := admin.ListTopics(ctx, topic)
	if err != nil {
		t.Fatalf("kadm ListTopics: %v", err)
	}
	detail, ok := details[topic]
	if !ok || detail.Err != nil {
		t.Fatalf("metadata for %q: present %v, error %v", topic, ok, detail.Err)
	}
	if got := len(detail.Partitions); got != int(partitions) {
		t.Fatalf("metadata lists %d partitions of %q, want %d", got, topic, partitions)
	}
	for _, p := range detail.Partitions.Sorted() {
		if p.Err != nil || p.Leader < 0 {
			t.Errorf("partition %d: leader %d, error %v", p.Partition, p.Leader, p.Err)
		}
	}
}

func (c *franzGoClient) createTopic(t *testing.T, topic string) {
	createTopicWithFranzGo(t, c.address, topic, roundTripPartitions)
}

// produce sends each codec's records with a client compressing with that
// codec; ProduceSync keeps their order within each partition.
func (c *franzGoClient) produce(t *testing.T, topic string, plan []plannedRecord) []producedRecord {
	var produced []producedRecord
	for _, group := range groupByCodec(plan) {
		client := newFranzGoClient(t, c.address, kgo.ProducerBatchCompression(franzGoCodec(t, group[0].Codec)))
		records := make([]*kgo.Record, len(group))
		for i, r := range group {
			records[i] = &kgo.Record{Topic: topic, Key: r.Key, Value: r.Value}
			for _, h := range r.Headers {
				records[i].Headers = append(records[i].Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
		results := client.ProduceSync(ctx, records...)
		cancel()
		if err := results.FirstErr(); err != nil {
			t.Fatalf("ProduceSync with %s: %v", group[0].Codec, err)
		}
		for i, r := range records {
			produced = append(produced, producedRecord{record: group[i].record, Partition: r.Partition, Offset: r.Offset})
		}
		client.Close()
	}
	return produced
}

func franzGoCodec(t *testing.T, codec string) kgo.CompressionCodec {
	switch codec {
	case codecNone:
		return kgo.NoCompression()
	case codecGzip:
		return kgo.GzipCompression()
	case codecSnappy:
		return kgo.SnappyCompression()
	case codecLz4:
		return kgo.Lz4Compression()
	case codecZstd:
		return kgo.ZstdCompression()
	}
	t.Fatalf("unknown codec %q", codec)
	panic("unreachable")
}

// consume assigns every partition directly (ConsumePartitions: no group)
// from the start and polls until count records have arrived.
func (c *franzGoClient) consume(t *testing.T, topic string, count int) []consumedRecord {
	return consumeWithFranzGo(t, c.address, topic, roundTripPartitions, count)
}

// consumeWithFranzGo reads partitions 0..n-1 of topic from offset 0 until
// count records have arrived or clientTimeout passes.
func consumeWithFranzGo(t testing.TB, address, topic string, partitions int32, count int) []consumedRecord {
	t.Helper()
	assignment := map[int32]kgo.Offset{}
	for partition := range partitions {
		assignment[partition] = kgo.NewOffset().AtStart()
	}
	client := newFranzGoClient(t, address, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assignment}))
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	var consumed []consumedRecord
	for len(consumed) < count {
		fetches := client.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Errorf("after %v, read %d of %d records", clientTimeout, len(consumed), count)
			return consumed
		}
		for _, fetchError := range fetches.Errors() {
			t.Fatalf("fetch %s/%d: %v", fetchError.Topic, fetchError.Partition, fetchError.Err)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			got := consumedRecord{record: record{Key: r.Key, Value: r.Value}, Partition: r.Partition, Offset: r.Offset}
			for _, h := range r.Headers {
				got.Headers = append(got.Headers, header{Key: h.Key, Value: h.Value})
			}
			consumed = append(consumed, got)
		})
	}
	return consumed
}

func (c *franzGoClient) listOffsets(t *testing.T, topic string) (earliest, latest map[int32]int64) {
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	admin := kadm.NewClient(newFranzGoClient(t, c.address))
	read := func(what string, list func(context.Context, ...string) (kadm.ListedOffsets, error)) map[int32]int64 {
		listed, err := list(ctx, topic)
		if err == nil {
			err = listed.Error()
		}
		if err != nil {
			t.Fatalf("kadm %s: %v", what, err)
		}
		offsets := map[int32]int64{}
		listed.Each(func(o kadm.ListedOffset) { offsets[o.Partition] = o.Offset })
		return offsets
	}
	return read("ListStartOffsets", admin.ListStartOffsets), read("ListEndOffsets", admin.ListEndOffsets)
}

// hash is kgo's default for keyed records: murmur2, as the Java client.
// Null keys are spread by the sticky partitioner.
func (c *franzGoClient) hash(key []byte, partitions int32) (int32, bool) {
	if key == nil {
		return 0, false
	}
	partitioner := kgo.StickyKeyPartitioner(nil).ForTopic(roundTripTopic)
	return int32(partitioner.Partition(&kgo.Record{Key: key}, int(partitions))), true
}
