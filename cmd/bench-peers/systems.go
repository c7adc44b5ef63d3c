package main

import (
	"context"
	"strings"

	"sluice/jepsen/bench"
)

// settings are what every system under test gets the same of.
type settings struct {
	// partitions is the topic's partitions in Kafka and the number of
	// streams in NATS: both are the unit of ordering, storage and
	// replication. The raw baseline has one file.
	partitions int
	// producers is how many producing clients (connections) run at once.
	producers int
	// pendingMax bounds records handed to a client and not acknowledged,
	// per producer: kgo's MaxBufferedRecords, NATS's async publish max
	// pending, the raw client's window.
	pendingMax int
}

// target is a started system: its processes and how to reach it.
type target struct {
	children  []*child
	connector connector
}

func (t *target) stop() {
	for _, c := range t.children {
		c.stop()
	}
}

// connector opens clients of one protocol on a started system. topic
// names a Kafka topic, a family of NATS streams, or a raw log file.
type connector interface {
	prepare(ctx context.Context, topic string) error
	senders(topic string, count int) ([]bench.Sender, error)
	receiver(ctx context.Context, topic string, fromEnd bool) (bench.Receiver, error)
}

// system is one row of the table: how to start it in a fresh directory.
type system struct {
	id    string
	label string
	start func(ctx context.Context, h *harness, dir string) (*target, error)
}

// systems is every row, in the table's order.
func systems() []system {
	return []system{
		{"sluice", "Sluice 1 node, durable (fsync before ack)", startSluiceSingle(false)},
		{"sluice-pagecache", "Sluice 1 node, page cache (flush.messages=max)", startSluiceSingle(true)},
		{"sluice-3", "Sluice 3 nodes, RF=3, durable", startSluiceCluster},
		{"kfake-memory", "kfake 1 broker, in memory", startKfake(1, kfakeMemory)},
		{"kfake-dir", "kfake 1 broker, data dir, no sync", startKfake(1, kfakeDataDir)},
		{"kfake-sync", "kfake 1 broker, data dir, sync writes", startKfake(1, kfakeSyncWrites)},
		{"kfake-memory-3", "kfake 3 brokers, in memory, RF=3", startKfake(3, kfakeMemory)},
		{"kfake-sync-3", "kfake 3 brokers, sync writes, RF=3", startKfake(3, kfakeSyncWrites)},
		{"nats-r1", "NATS JetStream R1, file, default sync (2 min)", startNATS(1, false)},
		{"nats-r1-sync", "NATS JetStream R1, file, sync always", startNATS(1, true)},
		{"nats-r3", "NATS JetStream 3 nodes R3, file, default sync", startNATS(3, false)},
		{"raw", "raw baseline: TCP to file, group fdatasync", startRaw},
	}
}

// comparison is one line of the ratios table: subject against baseline.
type comparison struct {
	subject, baseline string
}

// comparisons are the ratios the closing note quotes.
var comparisons = []comparison{
	{"sluice", "nats-r1-sync"},
	{"sluice", "nats-r1"},
	{"sluice", "kfake-sync"},
	{"sluice", "kfake-memory"},
	{"sluice", "raw"},
	{"sluice-pagecache", "kfake-dir"},
	{"sluice-pagecache", "nats-r1"},
	{"sluice-3", "nats-r3"},
	{"sluice-3", "kfake-sync-3"},
}

// selectSystems keeps the systems whose id is listed (all when empty).
func selectSystems(all []system, list string) []system {
	if strings.TrimSpace(list) == "" {
		return all
	}
	wanted := map[string]bool{}
	for _, id := range strings.Split(list, ",") {
		wanted[strings.TrimSpace(id)] = true
	}
	var kept []system
	for _, s := range all {
		if wanted[s.id] {
			kept = append(kept, s)
		}
	}
	return kept
}
