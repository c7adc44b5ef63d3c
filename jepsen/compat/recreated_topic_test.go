package compat

import (
	"context"
	"encoding/base64"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

// TestFranzGoRecreatedTopicStartsAfresh: with kadm a topic is written,
// a group commits its ends, and the topic is deleted and created again
// under the same name. The new topic must be empty, with a new id and
// its own partition.metadata on disk, and the group must have no
// committed offset of it (Kafka deletes a deleted topic's offsets), so a
// consumer resuming the group would start from the new topic's start.
// After the new topic is written and the broker killed (SIGKILL) and
// restarted, a reader from the start gets exactly the new records.
func TestFranzGoRecreatedTopicStartsAfresh(t *testing.T) {
	t.Parallel()
	broker := StartBroker(t, Options{})
	const topic, group = "recreated", "recreated-group"
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	admin := kadm.NewClient(newFranzGoClient(t, broker.Addr()))

	createTopicWithFranzGo(t, broker.Addr(), topic, 2)
	oldID := topicID(t, broker.Addr(), topic)
	old := produceToPartitions(t, broker.Addr(), topic, []int{3, 5})
	commits := kadm.Offsets{}
	commits.Add(kadm.Offset{Topic: topic, Partition: 0, At: 3})
	commits.Add(kadm.Offset{Topic: topic, Partition: 1, At: 5})
	if committed, err := admin.CommitOffsets(ctx, group, commits); err != nil || committed.Error() != nil {
		t.Fatalf("kadm CommitOffsets: %v %v", err, committed.Error())
	}
	checkCommitted(t, broker.Addr(), group, topic, map[int32]int64{0: 3, 1: 5})

	deleted, err := admin.DeleteTopics(ctx, topic)
	if err == nil {
		err = deleted.Error()
	}
	if err != nil {
		t.Fatalf("kadm DeleteTopics: %v", err)
	}
	createTopicWithFranzGo(t, broker.Addr(), topic, 2)
	if newID := topicID(t, broker.Addr(), topic); newID == oldID {
		t.Fatalf("the re-created topic has the deleted one's id %x", oldID)
	}
	if got := fetchCommitted(t, broker.Addr(), group, topic); len(got) != 0 {
		t.Fatalf("the group keeps committed offsets %v of the deleted topic", got)
	}
	checkPartitionMetadataFiles(t, broker.DataDir(), topic, topicID(t, broker.Addr(), topic))

	fresh := produceToPartitions(t, broker.Addr(), topic, []int{2, 1})
	broker.Kill()
	if err := broker.Restart(); err != nil {
		t.Fatalf("restart after SIGKILL: %v", err)
	}
	read := consumeWithFranzGo(t, broker.Addr(), topic, 2, len(fresh))
	got := map[partitionOffset]string{}
	for _, r := range read {
		got[partitionOffset{r.Partition, r.Offset}] = string(r.Value)
	}
	if !maps.Equal(got, fresh) {
		t.Fatalf("after the re-creation and a restart the topic holds %v, want only the new records %v (the deleted topic had %v)", got, fresh, old)
	}
	if got := fetchCommitted(t, broker.Addr(), group, topic); len(got) != 0 {
		t.Fatalf("after a restart the group has committed offsets %v of the re-created topic", got)
	}
}

// topicID is the topic's id as Metadata shows it, asked by a client of
// its own: kgo answers a Metadata request from its cache for a while.
func topicID(t *testing.T, address, topic string) [16]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	topics, err := kadm.NewClient(newFranzGoClient(t, address)).ListTopics(ctx, topic)
	if err != nil || topics[topic].Err != nil {
		t.Fatalf("kadm ListTopics %s: %v %v", topic, err, topics[topic].Err)
	}
	return [16]byte(topics[topic].ID)
}

// checkPartitionMetadataFiles requires every partition directory of topic
// in the broker's data folder to name id in its partition.metadata, in
// Kafka's format (the id in URL-safe base64 without padding).
func checkPartitionMetadataFiles(t *testing.T, dataDir, topic string, id [16]byte) {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(dataDir, topic+"-*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no partition directories of %s in %s (%v)", topic, dataDir, err)
	}
	want := "topic_id: " + base64.RawURLEncoding.EncodeToString(id[:])
	for _, dir := range slices.Sorted(slices.Values(dirs)) {
		data, err := os.ReadFile(filepath.Join(dir, "partition.metadata"))
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if !strings.HasPrefix(string(data), "version: 0\n") || !strings.Contains(string(data), want+"\n") {
			t.Fatalf("%s/partition.metadata holds %q, want version 0 and %q", dir, data, want)
		}
	}
}

// TestSluiceTopicDeleteByID: `sluice topic delete --id` deletes the topic
// `sluice topic describe` shows by its id, and only that one: the name
// created again is another topic, which a second delete by the old id
// leaves alone.
func TestSluiceTopicDeleteByID(t *testing.T) {
	t.Parallel()
	broker := StartBroker(t, Options{})
	binary := BuildBinary(t)
	const topic = "deleted-by-id"
	createTopicWithFranzGo(t, broker.Addr(), topic, 1)
	described := string(runOutsideTool(t, nil, binary, "topic", "describe", "--brokers", broker.Addr(), topic))
	old := topicID(t, broker.Addr(), topic)
	printed := base64.StdEncoding.EncodeToString(old[:])
	if !strings.Contains(described, "id "+printed) {
		t.Fatalf("sluice topic describe printed %q, without the id %s", described, printed)
	}
	if out := string(runOutsideTool(t, nil, binary, "topic", "delete", "--brokers", broker.Addr(), "--id", printed)); !strings.Contains(out, "deleted "+topic) {
		t.Fatalf("sluice topic delete --id printed %q", out)
	}
	createTopicWithFranzGo(t, broker.Addr(), topic, 1)
	again := topicID(t, broker.Addr(), topic)
	cmd := exec.Command(binary, "topic", "delete", "--brokers", broker.Addr(), "--id", printed)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "UNKNOWN_TOPIC_ID") {
		t.Fatalf("deleting the old id again: %v, %q; want a failure naming UNKNOWN_TOPIC_ID", err, out)
	}
	if now := topicID(t, broker.Addr(), topic); now != again {
		t.Fatalf("the topic created again has id %x after the stale delete, want %x", now, again)
	}
}
