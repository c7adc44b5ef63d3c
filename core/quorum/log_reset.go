package quorum

import (
	"errors"
	"fmt"

	"sluice/core"
	"sluice/core/batch"
	corelog "sluice/core/log"
)

// After adopting a snapshot, the log must start at the snapshot's end. If
// the log already has the snapshot's last batch (same epoch at that offset:
// then it agrees with the snapshot before it, by log matching), moving its
// start up is enough. Otherwise the log is emptied and restarted at the
// snapshot's end, as Kafka's truncateFullyAndStartAt does.
//
// core/log has no call that restarts an empty log at a chosen offset, so
// the restart is built from the calls it has: TruncateTo the log start
// (which empties the log and its epoch cache), append one filler batch that
// spans the offsets up to the snapshot's end (a control batch without
// records, in the snapshot's epoch, like the empty batches Kafka's
// compaction leaves), and move the log start past it. The filler is never
// read: it lies below the start. Appends wait until the truncation is
// durable, so the restart may take a few tries; meanwhile the node neither
// fetches nor delivers. A crash half-way is harmless: the snapshot was
// durable first, and Open restarts the log again.
//
// With a log.TruncateFullyAndStartAt(offset), all of this would be that one
// call.

// alignLogWithSnapshot makes the log start at the snapshot's end.
func (q *Quorum) alignLogWithSnapshot(id snapshotID) {
	l := q.metadataLog
	switch {
	case l.StartOffset() >= id.endOffset:
		return
	case id.endOffset <= l.EndOffset() && q.logEpochAt(id.endOffset-1) == id.epoch:
		if err := l.AdvanceStartOffset(id.endOffset); err != nil {
			q.failLog(err)
		}
		return
	}
	q.logReset = &id
	q.continueLogReset()
}

// continueLogReset takes the restart as far as the log allows, and retries
// after retryBackoff when the log refuses an append for now.
func (q *Quorum) continueLogReset() {
	if q.closed || q.logReset == nil {
		return
	}
	id := *q.logReset
	l := q.metadataLog
	if l.EndOffset() > l.StartOffset() {
		if err := l.TruncateTo(l.StartOffset()); err != nil {
			q.failLog(err)
			return
		}
	}
	if l.EndOffset() < id.endOffset {
		if latest := l.LatestEpoch(); latest > id.epoch {
			panic(q.describeLog(fmt.Sprintf("an empty log in epoch %d cannot restart at snapshot %s", latest, id)))
		}
		_, err := l.AppendReplicated(fillerBatches(l.EndOffset(), id.endOffset, id.epoch))
		if errors.Is(err, corelog.ErrTruncationNotDurable) || errors.Is(err, core.ErrDiskFull) {
			q.world.Clock.AfterFunc(retryBackoff, q.continueLogReset)
			return
		}
		if err != nil {
			q.failLog(err)
			return
		}
	}
	if err := l.AdvanceStartOffset(id.endOffset); err != nil {
		q.failLog(err)
		return
	}
	q.logReset = nil
	q.logger.Info("log restarted at snapshot", "snapshot", id.String())
	q.checkInvariants()
	q.maybeApply()
	q.maybeFetch()
}

// failLog halts the node after the metadata log failed in a way it cannot
// work around; recovery starts over from the disk.
func (q *Quorum) failLog(err error) {
	q.closed = true
	q.world.Halt(fmt.Errorf("quorum: metadata log: %w", err))
}

// fillerBatches spans [from, to) with control batches that hold no
// records: the empty batches compaction leaves (batch.Empty).
func fillerBatches(from, to int64, epoch int32) []byte {
	var out []byte
	for from < to {
		span := min(to-from, fillerOffsetsMax)
		out = append(out, batch.Empty(batch.Header{
			BaseOffset:      from,
			LastOffsetDelta: int32(span - 1),
			LeaderEpoch:     epoch,
			Attributes:      batch.Control,
			MaxTimestamp:    -1,
			ProducerID:      batch.NoProducerID,
			ProducerEpoch:   -1,
			BaseSequence:    -1,
		})...)
		from += span
	}
	return out
}
