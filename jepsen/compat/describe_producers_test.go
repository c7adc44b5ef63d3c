package compat

import (
	"context"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestDescribeProducersWithKadm: kgo's idempotent producer writes to one
// partition of the real binary; kadm's DescribeProducers (what
// kafka-transactions.sh describe-producers asks) must then name that
// producer, by the id and epoch kgo was given, with the sequence of its
// last record, and no producer in the partition it did not write.
func TestDescribeProducersWithKadm(t *testing.T) {
	broker := StartBroker(t, Options{})
	const topic, records = "described", 12
	createTopicWithFranzGo(t, broker.Addr(), topic, 2)
	producer := newFranzGoClient(t, broker.Addr(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	for i := range records {
		r := &kgo.Record{Topic: topic, Partition: 1, Value: fmt.Appendf(nil, "v%d", i)}
		if err := producer.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	id, epoch, err := producer.ProducerID(ctx)
	if err != nil {
		t.Fatalf("kgo's producer id: %v", err)
	}

	described, err := kadm.NewClient(newFranzGoClient(t, broker.Addr())).DescribeProducers(ctx, kadm.TopicsSet{topic: {0: {}, 1: {}}})
	if err != nil {
		t.Fatalf("kadm DescribeProducers: %v", err)
	}
	partitions := described[topic].Partitions
	if len(partitions) != 2 || partitions[0].Err != nil || partitions[1].Err != nil {
		t.Fatalf("DescribeProducers answered %+v", partitions)
	}
	if got := partitions[0].ActiveProducers; len(got) != 0 {
		t.Errorf("partition 0, never written, has producers %+v", got)
	}
	got := partitions[1].ActiveProducers.Sorted()
	if len(got) != 1 || got[0].ProducerID != id || got[0].ProducerEpoch != epoch || got[0].LastSequence != records-1 ||
		got[0].LastTimestamp <= 0 || got[0].CoordinatorEpoch != -1 || got[0].CurrentTxnStartOffset != -1 {
		t.Fatalf("partition 1's producers %+v, want producer %d epoch %d with last sequence %d and no transaction", got, id, epoch, records-1)
	}
}
