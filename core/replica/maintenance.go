package replica

// Maintain runs the periodic housekeeping of a partition: retention by
// size and age, and the expiry of idle idempotent producers (those last
// heard from before producerCutoffMs).
func (p *Partition) Maintain(producerCutoffMs int64) {
	if p.closed {
		return
	}
	if p.config.Delete {
		if deleted := p.log.ApplyRetention(); deleted > 0 {
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
