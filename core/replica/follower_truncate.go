package replica

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	corelog "sluice/core/log"
)

// Where a follower's log diverges from its new leader's, the follower cuts
// its own tail, found by leader epochs (KIP-101, KIP-279), never by its
// high watermark: a follower's high watermark can lag the leader's, so
// cutting there could remove committed records (the first KIP-101
// scenario), and a tail above it written in an epoch the leader never saw
// would survive (the second). The leader's fetch answer names the last
// epoch at or below the follower's last one that its own log has, and
// where it ends there (DivergingEpoch); the follower cuts at the end of
// that epoch in its own log or at the leader's, whichever is smaller, and
// fetches again. When its own log does not have that epoch, it cuts at
// the end of the largest epoch below it that it has and asks again.
//
// Invariant (asserted): a follower never cuts below its high watermark,
// since everything below it is committed and every possible leader has
// it. Two things knowingly break the promise, and there the cut is logged
// instead: an unclean election in the partition's history (the metadata
// says so, NoteUncleanElection), whose leader may lack committed records,
// whatever unclean.leader.election.enable says by the time this follower
// meets it; and page-cache mode (flush.messages > 1), where a leader whose
// machine lost power may come back without records it had counted as
// committed.

// truncateDivergence cuts the log where the leader's answer says it
// diverges (Kafka's AbstractFetcherThread.getOffsetTruncationState), given
// the leader's log start as well.
//
// One answer needs more than a cut. For a last epoch below every epoch the
// leader still has (retention or DeleteRecords took its history), KIP-279
// answers that epoch with the leader's log start as its end. Whatever the
// cut keeps then lies below the leader's start: nothing there can be
// checked against the leader, and this log's start follows the leader's
// past it at the next fetch. But the producer state is rebuilt from what
// the cut keeps, and a batch kept there may be one this replica appended as
// a leader cut off from the rest, never committed, at an offset that holds
// another record everywhere else: leading later, the replica would answer
// that batch's retry as a duplicate, at that offset (cluster seed 1606352).
// So where the cut would keep only records below the leader's start, the
// log restarts at that start instead, as Kafka's follower does when it
// falls behind the leader's start (truncateFullyAndStartAt). Kafka itself
// cuts and keeps the batch.
func (p *Partition) truncateDivergence(leaderEpoch int32, leaderEnd, leaderStart int64) error {
	if leaderEpoch < 0 || leaderEnd < 0 {
		p.logger.Warn("leader sent an undefined diverging epoch", "epoch", leaderEpoch, "end", leaderEnd)
		return kerr.UnknownServerError
	}
	end := p.log.EndOffset()
	ownEpoch, ownEnd := p.log.EndOffsetForEpoch(leaderEpoch)
	var target int64
	switch {
	case ownEpoch < 0:
		// This log has no epoch at or below the leader's: whatever it
		// has came later than everything the leader can vouch for.
		target = min(leaderEnd, end)
	case ownEpoch != leaderEpoch:
		// This log never had the leader's epoch: cut at the end of the
		// largest one below it, and ask again with that one.
		target = min(ownEnd, end)
	default:
		target = min(ownEnd, leaderEnd, end)
	}
	if leaderStart >= 0 && p.log.StartOffset() < target && target <= leaderStart {
		return p.restartLogAt(leaderStart, fmt.Sprintf(
			"diverges from the leader below its log start %d: its epoch %d ends at %d, this log's %d at %d",
			leaderStart, leaderEpoch, leaderEnd, ownEpoch, ownEnd))
	}
	if target >= end {
		// A cut of nothing: this log is empty (its start was moved to
		// its end), its epoch cache holds only the epoch in force there,
		// with no batch, and the leader never had that epoch. Kafka's
		// truncateTo forgets such an entry; here the log restarts, empty,
		// at its end, which forgets it too and also holds appends until
		// no crash can bring it back: a checkpoint still naming it would
		// make recovery refuse the older epoch's batches that come next
		// (log seed 1586227, when the entry was dropped on its own).
		if p.log.StartOffset() == end && p.log.LatestEpoch() >= 0 {
			return p.restartLogAt(end, fmt.Sprintf("forgets epoch %d, which holds no batch: the leader's epoch %d ends at %d",
				p.log.LatestEpoch(), leaderEpoch, leaderEnd))
		}
		p.logger.Warn("diverging epoch answer asks for no truncation", "epoch", leaderEpoch, "leader_end", leaderEnd,
			"own_epoch", ownEpoch, "own_end", ownEnd, "log_end", end)
		return kerr.UnknownServerError
	}
	reason := fmt.Sprintf("diverges from the leader: its epoch %d ends at %d, this log's %d at %d", leaderEpoch, leaderEnd, ownEpoch, ownEnd)
	return p.truncate(target, reason)
}

// restartOutOfRange handles OFFSET_OUT_OF_RANGE from the leader: this
// follower's log end is below the leader's log start (the leader deleted
// what this follower still needs: restart the log empty at the leader's
// start, as Kafka's truncateFullyAndStartAt), or above the leader's end
// (only after an unclean election or a lost page cache): cut back to the
// leader's high watermark and let the epochs find the rest.
func (p *Partition) restartOutOfRange(position FetchPosition, answer FetchAnswer) error {
	if answer.LogStartOffset < 0 || answer.HighWatermark < 0 {
		return kerr.OffsetOutOfRange
	}
	if position.FetchOffset < answer.LogStartOffset {
		return p.restartLogAt(answer.LogStartOffset, "behind the leader's log start")
	}
	if p.log.LatestEpoch() < 0 || answer.HighWatermark < p.log.StartOffset() {
		return p.restartLogAt(answer.LogStartOffset, "ahead of the leader's log end, with nothing to compare")
	}
	return p.truncate(answer.HighWatermark, "ahead of the leader's log end")
}

// truncate cuts the log at offset (see core/log TruncateTo), rebuilds the
// producer state from what is left, and waits for the cut to be durable
// before fetching again.
func (p *Partition) truncate(offset int64, reason string) error {
	if offset >= p.log.EndOffset() {
		return nil
	}
	if offset < p.log.StartOffset() {
		// Retention deleted what lies below this log's start, so there
		// is nothing left to keep: empty the log and start again at the
		// offset, as Kafka's follower does (truncateFullyAndStartAt).
		// Refusing would leave it asking the leader again, for good.
		return p.restartLogAt(offset, reason)
	}
	p.checkTruncation(offset, reason)
	p.logger.Info("truncating", "to", offset, "log_end", p.log.EndOffset(), "high_watermark", p.highWatermark, "reason", reason)
	if err := p.log.TruncateTo(offset); err != nil {
		p.logger.Warn("truncation failed", "to", offset, "error", err)
		return kafkaError(err)
	}
	return p.afterTruncation()
}

// restartLogAt empties the log and starts it again at start.
func (p *Partition) restartLogAt(start int64, reason string) error {
	if start < p.log.EndOffset() && p.log.StartOffset() < p.log.EndOffset() {
		p.checkTruncation(start, reason)
	}
	p.logger.Info("restarting the log", "start", start, "log_start", p.log.StartOffset(), "log_end", p.log.EndOffset(),
		"high_watermark", p.highWatermark, "reason", reason)
	if err := p.log.TruncateFullyAndStartAt(start); err != nil {
		switch {
		case errors.Is(err, corelog.ErrTruncationNotDurable):
			// An earlier cut is not durable yet: the fetcher backs off
			// and the next answer restarts the log.
			p.logger.Info("restarting the log waits for a cut to be durable", "start", start)
		case errors.Is(err, corelog.ErrSwapNotFinished):
			// Likewise for a compaction swap of the segment holding start
			// (__consumer_offsets, compacted topics).
			p.logger.Info("restarting the log waits for a compaction swap to finish", "start", start)
		default:
			p.logger.Warn("restarting the log failed", "start", start, "error", err)
		}
		return kafkaError(err)
	}
	return p.afterTruncation()
}

// afterTruncation brings the producer state and the high watermark in line
// with a log that was cut or restarted.
func (p *Partition) afterTruncation() error {
	if err := p.rebuildProducerState(); err != nil {
		// The producer state cannot be trusted: only recovery can.
		p.w.Halt(fmt.Errorf("replica: %s-%d after truncation: %w", p.Topic, p.Index, err))
		return kerr.KafkaStorageError
	}
	p.highWatermark = min(max(p.highWatermark, p.log.StartOffset()), p.log.EndOffset())
	p.leaderHighWatermark = -1
	// What recovery kept above the cut is gone: the replica is recovered
	// once what is left is durable. Otherwise a page-cache log, whose
	// next sync may be far off, would wait for a sync past the cut to
	// serve anything, and lead without answering.
	p.recoveredEnd = min(p.recoveredEnd, p.log.EndOffset())
	p.waitUntilDurable(p.maybeRecovered)
	return nil
}

// checkTruncation asserts that a cut does not reach below the high
// watermark, where the promise holds (see the top of this file).
func (p *Partition) checkTruncation(offset int64, reason string) {
	if offset >= p.highWatermark {
		return
	}
	if p.config.Durable && p.uncleanEpoch == 0 {
		panic(fmt.Sprintf("replica: %s-%d would truncate to %d, below its high watermark %d (%s): a committed record would be lost",
			p.Topic, p.Index, offset, p.highWatermark, reason))
	}
	p.logger.Warn("truncating below the high watermark: committed records are lost (unclean election or lost page cache)",
		"to", offset, "high_watermark", p.highWatermark, "reason", reason, "unclean_epoch", p.uncleanEpoch)
}
