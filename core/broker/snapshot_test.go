package broker

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"sluice/core/metadata"
)

// TestSingleNodeRestartsFromItsSnapshot makes the quorum snapshot the
// metadata and cut its log, then restarts the node: the image comes back
// from the snapshot (Restore at start) plus the log after it, and the
// partitions with their data.
func TestSingleNodeRestartsFromItsSnapshot(t *testing.T) {
	config := DefaultConfig()
	config.SnapshotEveryRecords = 10
	node := newTestNode(t, config)
	client := node.connect()
	for i := range 6 {
		client.createTopic(fmt.Sprintf("t%d", i), 3, "retention.ms", "3600000")
	}
	offset := client.produce("t0", 1, "kept")
	before := node.broker.image
	node.restart()
	requireEqualImagesExceptLiveness(t, before, node.broker.image)
	values, code, _ := node.connect().fetchAll("t0", 1, offset)
	requireNoError(t, "fetching after the restart", code, nil)
	if len(values) != 1 || values[0] != "kept" {
		t.Fatalf("fetched %q after the restart", values)
	}
}

// requireEqualImagesExceptLiveness compares the topics (ids, replicas)
// and configs of two images; the broker's registration, leaders and epochs
// change with every restart.
func requireEqualImagesExceptLiveness(t *testing.T, before, after *metadata.Image) {
	t.Helper()
	if !slices.Equal(before.TopicNames(), after.TopicNames()) {
		t.Fatalf("topics %v before the restart, %v after", before.TopicNames(), after.TopicNames())
	}
	for _, name := range before.TopicNames() {
		b, a := before.Topics[name], after.Topics[name]
		if a.ID != b.ID || len(a.Partitions) != len(b.Partitions) {
			t.Fatalf("topic %s: id %s with %d partitions before, %s with %d after", name, b.ID, len(b.Partitions), a.ID, len(a.Partitions))
		}
		for i := range b.Partitions {
			if !slices.Equal(a.Partitions[i].Replicas, b.Partitions[i].Replicas) {
				t.Fatalf("%s-%d: replicas %v before, %v after", name, i, b.Partitions[i].Replicas, a.Partitions[i].Replicas)
			}
		}
		if !maps.Equal(before.TopicConfigs(name), after.TopicConfigs(name)) {
			t.Fatalf("topic %s: configs %v before, %v after", name, before.TopicConfigs(name), after.TopicConfigs(name))
		}
	}
}
