package clusterworkload

import (
	"testing"

	"sluice/core/batch"
)

// storedBatchAt is a stored batch of count records from base.
func storedBatchAt(t *testing.T, base int64, count int) storedBatch {
	t.Helper()
	records := make([]batch.Record, count)
	b := batch.Build(batch.Spec{BaseOffset: base, ProducerID: batch.NoProducerID, Records: records})
	h, err := batch.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return storedBatch{header: h, bytes: b}
}

// A deletion may move a log's start inside a batch, which the replicas
// keep whole: the replica check compares from that batch, and still finds
// a gap after it (scenarios/batched-compressed-writes.txt, seed 2, failed
// replica-divergence when from dropped the batch holding the start).
func TestTheReplicaCheckKeepsTheBatchHoldingTheStart(t *testing.T) {
	log := []storedBatch{storedBatchAt(t, 10, 4), storedBatchAt(t, 14, 3), storedBatchAt(t, 17, 2)}
	kept := from(log, 15)
	if len(kept) != 2 || kept[0].header.BaseOffset != 14 {
		t.Fatalf("from 15 kept %d batches, the first at %d; want the batch 14-16 and the next", len(kept), kept[0].header.BaseOffset)
	}
	if problem := checkContiguous(kept, 15, 19); problem != "" {
		t.Fatalf("a log starting inside its first batch: %s", problem)
	}
	if problem := checkContiguous(from(log, 14), 14, 19); problem != "" {
		t.Fatalf("a log starting at its first batch: %s", problem)
	}
	gap := []storedBatch{log[1], storedBatchAt(t, 18, 1)}
	if problem := checkContiguous(gap, 15, 19); problem != "a batch at offset 18 where 17 was next" {
		t.Fatalf("a gap after the batch holding the start: %q", problem)
	}
	if problem := checkContiguous([]storedBatch{log[2]}, 15, 19); problem != "a batch at offset 17 where 15 was next" {
		t.Fatalf("records 15 and 16 missing: %q", problem)
	}
}
