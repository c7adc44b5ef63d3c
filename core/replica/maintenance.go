package replica

import (
	"context"
	"log/slog"

	corelog "sluice/core/log"
)

// CompactedMessage is the log line of a compaction step that removed
// records (the simulator counts them).
const CompactedMessage = "compacted"

// Maintain runs the periodic housekeeping of a partition: retention by
// size and age, one bounded step of log compaction when cleanup.policy
// holds compact, and the expiry of idle idempotent producers (those last
// heard from before producerCutoffMs).
func (p *Partition) Maintain(producerCutoffMs int64) {
	if p.closed {
		return
	}
	if p.config.Compact {
		p.compact()
	}
	if p.config.Delete {
		upTo := p.highWatermark
		if p.w.Canaries.On(CanaryRetentionAboveHighWatermark) {
			upTo = p.log.EndOffset()
		}
		if deleted := p.log.ApplyRetention(upTo); deleted > 0 {
			p.logger.Debug("retention deleted segments", "count", deleted, "start", p.log.StartOffset())
			if p.highWatermark < p.log.StartOffset() {
				p.highWatermark = p.log.StartOffset()
			}
			p.log.Sync()
		}
	}
	p.producers.Expire(producerCutoffMs)
}

// SyncThen syncs the log and calls done once everything appended so far is
// durable (at once if it already is). It is how a graceful shutdown waits.
func (p *Partition) SyncThen(done func()) {
	target := p.log.EndOffset()
	if p.closed || p.log.SyncedOffset() >= target {
		done()
		return
	}
	called := false
	p.log.OnSynced(func(synced int64) {
		if !called && synced >= target {
			called = true
			done()
		}
	})
	p.log.Sync()
}

// compact runs one step of log compaction. Only what is below the high
// watermark is compacted, as Kafka's cleaner stops at the last stable
// offset: a record is removed only because of a later one that no
// truncation can take away. The last batch of each producer this replica
// still tracks is kept, so that its sequence numbers survive a rebuild of
// the producer state from the log.
func (p *Partition) compact() {
	result, err := p.log.Compact(corelog.CompactOptions{
		UpTo:                p.highWatermark,
		ProducerLastOffsets: p.producers.LastOffsets,
	})
	if err != nil {
		p.logger.Warn("compaction step failed", "error", err)
		return
	}
	if result.SegmentsRewritten > 0 || result.PassFinished {
		// Info when it removed something, as Kafka's cleaner reports each
		// cleaning: rare (once per retention check at most) and what an
		// operator wants to see; a pass that found nothing is debug.
		level := slog.LevelDebug
		if result.RecordsRemoved+result.TombstonesRemoved > 0 {
			level = slog.LevelInfo
		}
		p.eventLogger().Log(context.Background(), level, CompactedMessage, "segments rewritten", result.SegmentsRewritten,
			"records removed", result.RecordsRemoved, "tombstones removed", result.TombstonesRemoved,
			"cleaner offset", p.log.CleanerOffset())
	}
}
