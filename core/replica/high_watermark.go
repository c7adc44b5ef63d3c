package replica

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// The high watermark is the line between what may be exposed and what may
// still vanish (see doc.go). The leader computes it; a follower learns it
// from the leader's fetch answers and keeps its own copy, which it starts
// from if it becomes leader.

// acknowledgedOffset is how far this replica's own log counts as held:
// synced data under the durable default, all of it in page-cache mode. It
// is what a leader counts for itself and what a follower reports as its
// fetch offset.
func (p *Partition) acknowledgedOffset() int64 {
	if p.config.Durable && !p.w.Canaries.On(CanaryAcksBeforeSync) {
		return p.log.SyncedOffset()
	}
	return p.log.EndOffset()
}

// updateHighWatermark moves a leader's high watermark up to the smallest
// offset every replica that counts has acknowledged, and completes the
// acks it now covers. What counts (Kafka's maybeIncrementLeaderHW, KIP-497):
//
//   - this replica, with its acknowledgedOffset;
//   - every member of the maximal ISR: the committed ISR plus a member a
//     pending proposal adds, since the controller may already have
//     committed it and may elect it;
//   - a follower outside the ISR that is caught up and may join it, so
//     that under steady writes it can catch the high watermark and join.
//
// A follower whose log end is not known yet (none of its fetches arrived
// in this leadership) holds the high watermark where it is. Nothing moves
// while the committed ISR is smaller than min.insync.replicas: with fewer
// copies than the topic demands, nothing more is exposed; nor while a
// former leader may still serve (takeover.go).
func (p *Partition) updateHighWatermark() {
	if !p.IsLeader() || len(p.isr) < p.config.MinInsyncReplicas || p.takingOver() {
		return
	}
	candidate := p.acknowledgedOffset()
	if !p.w.Canaries.On(CanaryHighWatermarkWithoutISR) {
		now := p.w.Clock.Elapsed()
		leaderEnd := p.log.EndOffset()
		// Computed once: with a proposal pending it is a new slice.
		maximal := p.maximalISR()
		for _, id := range maximal {
			if id == p.nodeID {
				continue
			}
			f := p.follower(id)
			if f == nil || f.logEndOffset < 0 {
				candidate = min(candidate, p.highWatermark)
				continue
			}
			candidate = min(candidate, f.logEndOffset)
		}
		for _, f := range p.followers {
			if !contains(maximal, f.id) && f.logEndOffset >= 0 && p.mayJoinISRSoon(f, leaderEnd, now) {
				candidate = min(candidate, f.logEndOffset)
			}
		}
	}
	if candidate <= p.highWatermark {
		return
	}
	if candidate > p.log.EndOffset() {
		panic(fmt.Sprintf("replica: %s-%d high watermark %d above the log end %d", p.Topic, p.Index, candidate, p.log.EndOffset()))
	}
	p.setHighWatermark(candidate)
}

// advanceFollowerHighWatermark moves a follower's high watermark up to the
// leader's, as far as this replica's own log holds it: never past its log
// end, and under the durable default never past what it has synced, so a
// follower that becomes leader never starts with a watermark over data a
// crash could take.
func (p *Partition) advanceFollowerHighWatermark() {
	if p.role != roleFollower || p.leaderHighWatermark < 0 {
		return
	}
	candidate := min(p.leaderHighWatermark, p.followerAcknowledgedOffset())
	if candidate > p.highWatermark {
		p.setHighWatermark(candidate)
	}
}

// setHighWatermark records a new high watermark and tells whoever waits.
func (p *Partition) setHighWatermark(offset int64) {
	if offset < p.log.StartOffset() || offset > p.log.EndOffset() {
		panic(fmt.Sprintf("replica: %s-%d high watermark %d outside the log [%d, %d]",
			p.Topic, p.Index, offset, p.log.StartOffset(), p.log.EndOffset()))
	}
	p.highWatermark = offset
	p.completeAckWaiters()
	for _, f := range p.highWatermarkListeners {
		f()
	}
}

// failAcksIfUnderMinISR answers every waiting acks=all produce with
// NOT_ENOUGH_REPLICAS_AFTER_APPEND once the committed ISR is smaller than
// min.insync.replicas: the high watermark no longer moves, so they would
// only time out. As in Kafka, the batches stay in the log and may still
// commit if the ISR grows back; the producer retries (an idempotent one is
// then answered with the original offsets).
func (p *Partition) failAcksIfUnderMinISR() {
	if p.IsLeader() && len(p.isr) < p.config.MinInsyncReplicas && len(p.ackWaiters) > 0 {
		p.logger.Info("ISR below min.insync.replicas; failing waiting acks=all produces",
			"isr", p.isr, "min_insync_replicas", p.config.MinInsyncReplicas, "waiting", len(p.ackWaiters))
		p.failAckWaiters(kerr.NotEnoughReplicasAfterAppend)
	}
}
