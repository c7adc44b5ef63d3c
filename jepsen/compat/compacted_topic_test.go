package compat

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	compactedTopic = "changelog"
	// compactedKeys are the keys each round writes a new value of;
	// compactedRounds how many rounds; the broker restarts after each of
	// the first compactedRestarts, so that every partition's leader epoch
	// moves on between them.
	compactedKeys     = 30
	compactedRounds   = 8
	compactedRestarts = 3
	// compactedTombstoneRound deletes compactedTombstoneKey: its last
	// record is the tombstone, which stays (delete.retention.ms is a day).
	compactedTombstoneRound = 5
	compactedTombstoneKey   = "k07"
	// compactionWaitMax bounds the wait for the cleaner to have removed
	// superseded records.
	compactionWaitMax = 60 * time.Second
)

// TestCompactedTopicWithRealClients: a topic with cleanup.policy=compact
// (a changelog, as Kafka Streams and KTables keep them) takes eight
// rounds of new values for thirty keys, one key deleted by a tombstone on
// the way, the broker restarted between the first rounds so that the
// log spans several leader epochs, in segments of 1 KiB so that the
// cleaner has sealed segments to work on. Once the cleaner has removed
// superseded records, franz-go, sarama, kafka-go, kcat (librdkafka) and
// kafkajs each read the partitions from the start: every key's last record must be its last
// value (the tombstone for the deleted key), offsets must only rise, the
// gaps compaction left and the empty batches it keeps (the first of each
// leader epoch) must not stall or confuse a reader, and all five must
// read exactly the same records.
func TestCompactedTopicWithRealClients(t *testing.T) {
	broker := StartBroker(t, Options{Settings: []string{"log.retention.check.interval.ms=200"}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*compactionWaitMax)
	defer cancel()
	admin := kadm.NewClient(newFranzGoClient(t, broker.Addr()))
	created, err := admin.CreateTopic(ctx, roundTripPartitions, 1, map[string]*string{
		"cleanup.policy":            kadm.StringPtr("compact"),
		"segment.bytes":             kadm.StringPtr("1024"),
		"min.cleanable.dirty.ratio": kadm.StringPtr("0.01"),
	}, compactedTopic)
	if err == nil {
		err = created.Err
	}
	if err != nil {
		t.Fatalf("creating %s: %v", compactedTopic, err)
	}

	latest := map[string][]byte{}
	produced := 0
	for round := range compactedRounds {
		producer := newFranzGoClient(t, broker.Addr(), kgo.DefaultProduceTopic(compactedTopic))
		for i := range compactedKeys {
			key := fmt.Sprintf("k%02d", i)
			value := fmt.Appendf(nil, "round%d-%s", round, key)
			if round == compactedTombstoneRound && key == compactedTombstoneKey {
				value = nil
			} else if round > compactedTombstoneRound && key == compactedTombstoneKey {
				continue
			}
			// One record per produce: many small batches, over many
			// segments.
			if err := producer.ProduceSync(ctx, &kgo.Record{Key: []byte(key), Value: value}).FirstErr(); err != nil {
				t.Fatalf("round %d: producing %s: %v", round, key, err)
			}
			latest[key] = value
			produced++
		}
		producer.Close()
		if round < compactedRestarts {
			broker.Stop()
			if err := broker.Restart(); err != nil {
				t.Fatalf("restarting the broker after round %d: %v", round, err)
			}
		}
	}

	read := awaitCompaction(ctx, t, broker.Addr(), admin, compactedTopic, produced)
	checkCompactedRead(t, "franz-go", read, latest)
	t.Logf("%d records produced, %d left after compaction", produced, len(read))

	for _, client := range []struct {
		name string
		open func(t *testing.T) roundTripClient
	}{
		{"sarama", func(*testing.T) roundTripClient { return &saramaClient{address: broker.Addr()} }},
		{"kafka-go", func(*testing.T) roundTripClient { return &kafkaGoClient{address: broker.Addr()} }},
		{"kcat", func(t *testing.T) roundTripClient {
			return &kcatClient{program: requireOutsideTool(t, "kcat", "kcat", kcatInstall), address: broker.Addr()}
		}},
		{"kafkajs", func(t *testing.T) roundTripClient {
			node, script := requireKafkajs(t)
			return &kafkajsClient{node: node, script: script, address: broker.Addr()}
		}},
	} {
		t.Run(client.name, func(t *testing.T) {
			reader := client.open(t)
			// The cleaner may have gone on since: read again with
			// franz-go, the reference, until two reads agree.
			reference := stableCompactedRead(ctx, t, broker.Addr(), admin)
			got := reader.consume(t, compactedTopic, len(reference))
			checkCompactedRead(t, client.name, got, latest)
			if !slices.EqualFunc(byPartition(got), byPartition(reference), slices.Equal) {
				t.Fatalf("%s read other records than franz-go:\n%s: %v\nfranz-go: %v", client.name, client.name, byPartition(got), byPartition(reference))
			}
		})
	}
}

// awaitCompaction reads topic with franz-go until the cleaner has removed
// some of the produced records, and returns that read; it fails t after
// compactionWaitMax.
func awaitCompaction(ctx context.Context, t *testing.T, address string, admin *kadm.Client, topic string, produced int) []consumedRecord {
	t.Helper()
	for deadline := time.Now().Add(compactionWaitMax); ; time.Sleep(200 * time.Millisecond) {
		read := readCompactedToEnd(ctx, t, address, admin, topic)
		if len(read) < produced {
			return read
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v, all %d records of %s are still there: the cleaner removed nothing", compactionWaitMax, produced, topic)
		}
	}
}

// readCompactedToEnd reads every partition of topic from its
// start to its end offset now, with franz-go.
func readCompactedToEnd(ctx context.Context, t *testing.T, address string, admin *kadm.Client, topic string) []consumedRecord {
	t.Helper()
	ends, err := admin.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatalf("listing end offsets: %v", err)
	}
	assignment := map[int32]kgo.Offset{}
	remaining := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			assignment[o.Partition] = kgo.NewOffset().AtStart()
			remaining[o.Partition] = o.Offset
		}
	})
	client := newFranzGoClient(t, address, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assignment}))
	defer client.Close()
	readCtx, cancel := context.WithTimeout(ctx, clientTimeout)
	defer cancel()
	var read []consumedRecord
	// The last record of a partition is in its active segment, which the
	// cleaner never touches: reading it means the partition is read.
	for len(remaining) > 0 {
		fetches := client.PollFetches(readCtx)
		if readCtx.Err() != nil {
			t.Fatalf("reading %s to its end: %v (partitions left: %v)", topic, readCtx.Err(), remaining)
		}
		for _, fetchError := range fetches.Errors() {
			t.Fatalf("fetch %s/%d: %v", fetchError.Topic, fetchError.Partition, fetchError.Err)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			read = append(read, consumedRecord{record: record{Key: r.Key, Value: r.Value}, Partition: r.Partition, Offset: r.Offset})
			if r.Offset+1 >= remaining[r.Partition] {
				delete(remaining, r.Partition)
			}
		})
	}
	return read
}

// stableCompactedRead reads compactedTopic with franz-go until two reads
// in a row agree.
func stableCompactedRead(ctx context.Context, t *testing.T, address string, admin *kadm.Client) []consumedRecord {
	t.Helper()
	previous := readCompactedToEnd(ctx, t, address, admin, compactedTopic)
	for {
		time.Sleep(time.Second)
		again := readCompactedToEnd(ctx, t, address, admin, compactedTopic)
		if slices.EqualFunc(byPartition(again), byPartition(previous), slices.Equal) {
			return again
		}
		previous = again
	}
}

// checkCompactedRead holds one reader's records to what compaction
// promises.
func checkCompactedRead(t *testing.T, reader string, read []consumedRecord, latest map[string][]byte) {
	t.Helper()
	last := map[string]consumedRecord{}
	previous := map[int32]int64{}
	for _, r := range read {
		if before, seen := previous[r.Partition]; seen && r.Offset <= before {
			t.Fatalf("%s: partition %d went from offset %d to %d", reader, r.Partition, before, r.Offset)
		}
		previous[r.Partition] = r.Offset
		last[string(r.Key)] = r
	}
	for key, value := range latest {
		got, ok := last[key]
		switch {
		case !ok:
			t.Fatalf("%s: key %s is gone; its last record (%q) must stay", reader, key, value)
		case value == nil && len(got.Value) != 0, value != nil && string(got.Value) != string(value):
			t.Fatalf("%s: key %s ends with %q at offset %d, want %q", reader, key, got.Value, got.Offset, value)
		}
	}
	if len(last) != len(latest) {
		t.Fatalf("%s: %d keys read, %d produced", reader, len(last), len(latest))
	}
}

// byPartition lists each partition's records as "offset:key=value", in the
// order read.
func byPartition(records []consumedRecord) [][]string {
	out := make([][]string, roundTripPartitions)
	for _, r := range records {
		out[r.Partition] = append(out[r.Partition], fmt.Sprintf("%d:%s=%s", r.Offset, r.Key, r.Value))
	}
	return out
}
