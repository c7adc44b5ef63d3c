package replica

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Admin operations on a partition: DeleteRecords and OffsetForLeaderEpoch.

// DeleteRecordsHighWatermark asks DeleteRecords to delete everything below
// the high watermark, as Kafka's -1 does.
const DeleteRecordsHighWatermark = -1

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
	p.whenStartDurable(timeout, done)
}

// whenStartDurable answers once the moved start offset is durable, or
// with REQUEST_TIMED_OUT after timeout (the move stays and becomes durable
// with a later sync; until then a crash may bring deleted records back,
// never lose others).
func (p *Partition) whenStartDurable(timeout time.Duration, done func(lowWatermark int64, err error)) {
	finished := false
	timer := p.w.Clock.AfterFunc(timeout, func() {
		if !finished {
			finished = true
			done(-1, kerr.RequestTimedOut)
		}
	})
	p.log.WhenDurable(func() {
		if finished {
			return
		}
		finished = true
		timer.Stop()
		if p.closed {
			done(-1, kerr.NotLeaderForPartition)
			return
		}
		done(p.log.StartOffset(), nil)
	})
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch for this partition
// (KIP-101, KIP-279): the largest leader epoch at or below requested that
// wrote to the log, and the offset where it ended (the next epoch's first
// offset, or the log end for the latest). A requested epoch below every
// known one gets itself and the log's first epoch offset; one above the
// current leader epoch, or -1, gets (-1, -1). currentLeaderEpoch, when not
// -1, fences a client with stale metadata (KIP-320), as Read does. Only
// the leader answers; see endOffsetForEpoch (leader_fetch.go) for how the
// current epoch is answered before its first batch.
func (p *Partition) EndOffsetForEpoch(currentLeaderEpoch, requested int32) (int32, int64, error) {
	if err := p.checkLeaderEpoch(currentLeaderEpoch); err != nil {
		return -1, -1, err
	}
	if !p.IsLeader() {
		return -1, -1, kerr.NotLeaderForPartition
	}
	epoch, end := p.endOffsetForEpoch(requested)
	return epoch, end, nil
}
