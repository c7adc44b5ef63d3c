package clusterworkload

import (
	"fmt"

	"sluice/jepsen/checker"
	"sluice/jepsen/history"
)

// Retention: a run with retention.bytes set (scenario Logs.RetentionBytes)
// deletes each partition's oldest segments, below the high watermark, on
// every replica on its own. A record deleted before any reader reached it
// is not lost, and a reader sent past it (OFFSET_OUT_OF_RANGE, then the
// earliest offset) skipped nothing it was owed; the checks are told where
// each partition's records were deleted (checker.Options.Deleted) and
// judge everything above that as before.

// deletedRecords lists, for each partition whose log start has moved,
// the offset below which retention or the operator deleted its records:
// the highest log
// start any replica shows, on its disk (its first segment's base offset)
// or in the answers the final drain got from the leaders. Each replica
// only deletes below its high watermark, so every record below that was
// committed and then deleted on purpose. Replicas delete on their own
// schedule, so one may still hold records another deleted; a record there
// that no read saw is permitted too, a slight leniency the per-replica
// start offsets would not allow and the disks do not record. The
// operator's DeleteRecords (deletes.go) move log starts too, and are
// covered the same way. Nil when the run neither sets retention.bytes nor
// deleted records.
func (r *run) deletedRecords() []checker.DeletedBelow {
	if r.scenario.Logs.RetentionBytes == 0 && r.counts.deletesSent == 0 {
		return nil
	}
	var deleted []checker.DeletedBelow
	for _, tp := range r.allPartitions() {
		if start := r.logStart(tp); start > 0 {
			deleted = append(deleted, checker.DeletedBelow{Partition: tp, Offset: start})
		}
	}
	return deleted
}

// logStart is the highest log start offset of tp that a replica's disk
// shows, or any answer a client got (the final drain's, a reader's, a
// group member's; see deletedRecords). The answers count because a
// partition's log start can step back when its leadership moves to a
// replica that had deleted less: a consumer told by the old leader that
// records were deleted skipped them, and they were, there.
func (r *run) logStart(tp history.TopicPartition) int64 {
	start := int64(0)
	if r.drainer != nil {
		start = r.drainer.LogStart(tp)
	}
	for _, d := range r.readers {
		start = max(start, d.reader.LogStart(tp))
	}
	for _, g := range r.groups {
		for _, m := range g.members {
			start = max(start, m.consumer.LogStart(tp))
		}
	}
	for _, log := range r.replicaLogs(tp) {
		if log.err == nil {
			start = max(start, log.first())
		}
	}
	return start
}

// logStartMax is the largest log start offset of any partition: proof
// that a scenario with retention deleted records.
func (r *run) logStartMax() int64 {
	most := int64(0)
	for _, d := range r.deletedRecords() {
		most = max(most, d.Offset)
	}
	return most
}

// commonStart is the highest first offset among a partition's replicas'
// logs: replicas delete old segments on their own schedules, so only
// what every replica still holds, from there on, can be compared.
func commonStart(logs []replicaLog) (int64, error) {
	start := int64(0)
	for _, log := range logs {
		if log.err != nil {
			return 0, fmt.Errorf("a replica's log cannot be read: %w", log.err)
		}
		start = max(start, log.first())
	}
	return start, nil
}

// from keeps the batches holding offsets at or above start, the one
// start lies inside included (a deletion may move a log's start into a
// batch, which every replica then keeps whole); log is left as it is.
func from(log []storedBatch, start int64) []storedBatch {
	at := 0
	for at < len(log) && log[at].header.LastOffset() < start {
		at++
	}
	return log[at:len(log):len(log)]
}
