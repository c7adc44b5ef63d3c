package harness

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The final read of a run whose last DeleteRecords took every record of a
// partition (smoke run, seed 1: log start 1026 = end 1026) must count that
// partition as read: nothing is left to poll, and a consumer at the end
// waits for good.
func TestDrainedCountsAPartitionDeletedToItsEnd(t *testing.T) {
	ends := map[int32]int64{0: 1035, 1: 1074, 2: 1026}
	starts := map[int32]int64{0: 877, 1: 1000, 2: 1026}
	positions := map[int32]int64{0: 1035, 1: 1074}
	if !drained(3, positions, starts, ends) {
		t.Errorf("partition 2, deleted up to its end, kept the read going")
	}
	starts[2] = 1025
	if drained(3, positions, starts, ends) {
		t.Errorf("partition 2 still holds offset 1025, unread, yet the read ended")
	}
	positions[2] = 1026
	if !drained(3, positions, starts, ends) {
		t.Errorf("every partition read to its end, yet the read went on")
	}
	positions[1] = 1073
	if drained(3, positions, starts, ends) {
		t.Errorf("partition 1 short of its end by one, yet the read ended")
	}
}

// TestFinalDrainFinishesWithAPartitionDeletedToItsEnd is the same against
// a real broker: partition 1 emptied by DeleteRecords, partition 0 holding
// its records; the final read returns every record of partition 0, and
// finishes, well within its bound.
func TestFinalDrainFinishesWithAPartitionDeletedToItsEnd(t *testing.T) {
	cluster := startTestCluster(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const topic, records = "emptied", 10
	client, err := kgo.NewClient(cluster.ClientOptions(kgo.DefaultProduceTopic(topic), kgo.RecordPartitioner(kgo.ManualPartitioner()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if _, err := CreateTopic(ctx, client, topic, 2, 1, nil); err != nil {
		t.Fatal(err)
	}
	for partition := range int32(2) {
		for i := range records {
			r := &kgo.Record{Partition: partition, Value: []byte{byte('a' + i)}}
			if err := client.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	deletion := kadm.Offsets{}
	deletion.Add(kadm.Offset{Topic: topic, Partition: 1, At: records})
	deleted, err := kadm.NewClient(client).DeleteRecords(ctx, deletion)
	if err == nil {
		err = deleted.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	log := newHistoryLog(time.Now())
	read, err := finalDrain(ctx, cluster, log, topic, 2, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if read != records {
		t.Fatalf("the final read returned %d records, want partition 0's %d", read, records)
	}
}
