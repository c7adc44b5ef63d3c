package replica

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Admin operations on a partition: DeleteRecords and OffsetForLeaderEpoch.

// DeleteRecordsHighWatermark asks DeleteRecords to delete everything below
// the high watermark, as Kafka's -1 does.
const DeleteRecordsHighWatermark = -1

// startOffsetSyncPoll is how often DeleteRecords looks whether the log has
// made its new start offset durable. The log reports completed syncs only
// when they move SyncedOffset, and a start offset change alone does not.
const startOffsetSyncPoll = time.Millisecond

// DeleteRecords moves the log start offset up to offset (Kafka's
// DeleteRecords; DeleteRecordsHighWatermark means the high watermark) and
// calls done with the new start once the move is durable, so that no crash
// brings the deleted records back. An offset above the high watermark, or
// negative, is OFFSET_OUT_OF_RANGE: records not yet committed may not be
// deleted. An offset at or below the start deletes nothing and answers the
// start once that is durable. A topic whose cleanup.policy lacks delete
// (compact only) refuses with POLICY_VIOLATION, as in Kafka. If the move is
// not durable within timeout, done gets REQUEST_TIMED_OUT (the move stays,
// and becomes durable later).
//
// done may be called before DeleteRecords returns.
func (p *Partition) DeleteRecords(offset int64, timeout time.Duration, done func(lowWatermark int64, err error)) {
	if !p.IsLeader() {
		done(-1, kerr.NotLeaderForPartition)
		return
	}
	if offset == DeleteRecordsHighWatermark {
		offset = p.highWatermark
	}
	switch {
	case offset < 0 || offset > p.highWatermark:
		done(-1, kerr.OffsetOutOfRange)
		return
	case !p.config.Delete:
		done(-1, kerr.PolicyViolation)
		return
	}
	if offset > p.log.StartOffset() {
		if err := p.log.AdvanceStartOffset(offset); err != nil {
			done(-1, kafkaError(err))
			return
		}
		p.logger.Info("records deleted", "start", offset)
	}
	// The first sync round to begin from now on covers the new start.
	target := p.log.SyncStats().RoundsStarted + 1
	p.log.Sync()
	p.whenStartDurable(target, timeout, done)
}

// whenStartDurable calls done once sync round target has completed, or
// the log has nothing left to sync, whichever comes first; the second
// covers a quiet log, where round target may never begin.
//
// Should a full disk make round target skip writing the checkpoint, the
// new start is not durable and a crash may bring deleted records back
// (never lose others); the log retries the checkpoint with its next sync.
func (p *Partition) whenStartDurable(target uint64, timeout time.Duration, done func(lowWatermark int64, err error)) {
	deadline := p.w.Clock.Elapsed() + timeout
	var check func()
	check = func() {
		switch {
		case p.closed:
			done(-1, kerr.NotLeaderForPartition)
		case p.syncedThrough(target):
			done(p.log.StartOffset(), nil)
		case p.w.Clock.Elapsed() >= deadline:
			done(-1, kerr.RequestTimedOut)
		default:
			p.w.Clock.AfterFunc(startOffsetSyncPoll, check)
		}
	}
	check()
}

// syncedThrough reports whether sync round target has completed, or no
// round is in flight and there is nothing to sync.
func (p *Partition) syncedThrough(target uint64) bool {
	before := p.log.SyncStats()
	if before.RoundsCompleted >= target {
		return true
	}
	if before.RoundsStarted > before.RoundsCompleted {
		return false // a round is in flight
	}
	p.log.Sync()
	return p.log.SyncStats().RoundsStarted == before.RoundsStarted
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch for this partition
// (KIP-101, KIP-279): the largest leader epoch at or below requested that
// wrote to the log, and the offset where it ended (the next epoch's first
// offset, or the log end for the latest). A requested epoch below every
// known one gets itself and the log's first epoch offset; one above the
// current leader epoch, or -1, gets (-1, -1). currentLeaderEpoch, when not
// -1, fences a client with stale metadata (KIP-320), as Read does.
//
// Kafka writes a new leader's epoch into its epoch cache, at the log end,
// the moment it becomes leader; Sluice's log records an epoch with its
// first batch. Until the leader has appended, the answer adds that entry,
// so that clients see what Kafka would tell them.
func (p *Partition) EndOffsetForEpoch(currentLeaderEpoch, requested int32) (int32, int64, error) {
	if err := p.checkLeaderEpoch(currentLeaderEpoch); err != nil {
		return -1, -1, err
	}
	if !p.IsLeader() {
		return -1, -1, kerr.NotLeaderForPartition
	}
	latest := p.log.LatestEpoch()
	if requested < 0 || latest >= p.leaderEpoch {
		epoch, end := p.log.EndOffsetForEpoch(requested)
		return epoch, end, nil
	}
	end := p.log.EndOffset()
	switch {
	case requested > p.leaderEpoch:
		return -1, -1, nil
	case requested == p.leaderEpoch, latest < 0:
		return requested, end, nil
	case requested >= latest:
		return latest, end, nil
	}
	epoch, end := p.log.EndOffsetForEpoch(requested)
	return epoch, end, nil
}
