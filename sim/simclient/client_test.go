package simclient

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"sluice/jepsen/checker"
	"sluice/jepsen/history"
	"sluice/sim/simdisk"
)

func TestProduceThenDrainReadsEveryValueInOrder(t *testing.T) {
	for _, idempotent := range []bool{false, true} {
		t.Run(fmt.Sprintf("idempotent=%v", idempotent), func(t *testing.T) {
			c := newCluster(t, 1, simdisk.Faults{SyncLatencyMax: time.Millisecond})
			producer := NewProducer(c.client("p1"), ProducerConfig{Acks: -1, Idempotent: idempotent}, c.recorder, c.processes)
			var want [testPartitions][]string
			for partition := range int32(testPartitions) {
				results := c.sendAll(producer, partition, fmt.Sprintf("v%d", partition), 10)
				for i, r := range results {
					if r.Type != history.OK || r.Offset != int64(i) {
						t.Fatalf("send %d to partition %d: %+v, want ok at offset %d", i, partition, r, i)
					}
					want[partition] = append(want[partition], fmt.Sprintf("v%d-%d", partition, i))
				}
			}
			reader := NewReader(c.client("r1"), ReaderConfig{}, c.recorder, c.processes)
			if err := reader.Assign([]history.TopicPartition{tp(1), tp(0)}); err != nil {
				t.Fatal(err)
			}
			drained := false
			reader.Drain(func() { drained = true })
			c.runUntil(time.Minute, "the drain", func() bool { return drained })

			ops := c.recorder.History()
			for partition := range int32(testPartitions) {
				if got := polledValues(ops, tp(partition)); !slices.Equal(got, want[partition]) {
					t.Errorf("partition %d polled %v, want %v", partition, got, want[partition])
				}
				if got := reader.Position(tp(partition)); got != 10 {
					t.Errorf("partition %d position %d after the drain, want 10", partition, got)
				}
			}
			report := checker.Check(ops, checker.Options{FinalDrain: true})
			if !report.Valid {
				t.Fatalf("checker: %s", report.String())
			}
		})
	}
}
