package group

import (
	"sluice/core/batch"
)

// scheduleRetentionCheck looks for expired offsets every
// offsets.retention.check.interval.ms, while this node leads an offsets
// partition.
func (c *Coordinator) scheduleRetentionCheck() {
	c.retentionTimer = c.w.Clock.AfterFunc(c.config.OffsetsRetentionCheckInterval, func() {
		c.retentionTimer = nil
		if c.closed || len(c.partitions) == 0 {
			return
		}
		c.expireOffsets()
		c.scheduleRetentionCheck()
	})
}

// expireOffsets deletes offsets older than offsets.retention.minutes, as
// Kafka's cleanupGroupMetadata does, and then the groups left empty
// without offsets. Deletion is by tombstone, applied to memory when it
// commits, like every offset change.
func (c *Coordinator) expireOffsets() {
	now := c.now()
	for _, index := range sortedKeys(c.partitions) {
		p := c.partitions[index]
		if p.loading() {
			continue
		}
		for _, id := range sortedKeys(p.groups) {
			c.expireGroupOffsets(p.groups[id], now)
		}
	}
}

// expireGroupOffsets tombstones g's expired offsets, and g itself when it
// is empty and has nothing left.
func (c *Coordinator) expireGroupOffsets(g *group, now int64) {
	if g.is(stateDead) {
		return
	}
	expired := c.expiredOffsets(g, now)
	groupGone := g.is(stateEmpty) && len(g.pendingCommits) == 0 && len(expired) == len(g.offsets)
	if len(expired) == 0 && !groupGone {
		return
	}
	var records []batch.Record
	for _, tp := range sortedPartitions(expired) {
		records = append(records, offsetRecord(g.id, tp, nil))
	}
	if groupGone {
		g.transition(stateDead, now)
		c.stopGroupTimers(g)
		records = append(records, groupTombstone(g.id))
	}
	c.logger.Info("expiring offsets", "group", g.id, "offsets", len(expired), "group_deleted", groupGone)
	c.write(g.partition, records, func(err error) {
		current := !g.partition.unloaded && g.partition.groups[g.id] == g
		switch {
		case err != nil:
			c.logger.Warn("cannot write expired offsets' tombstones", "group", g.id, "error", err)
			if groupGone && current {
				g.undoDeletion(c.now())
			}
		case groupGone:
			c.removeGroup(g)
		case current:
			for tp := range expired { // order-independent: deletes from a map
				delete(g.offsets, tp)
			}
		}
	}, func() {})
}

// expiredOffsets are g's offsets past retention, as Kafka judges them
// (GroupMetadata.removeExpiredOffsets): for a group without members,
// retention counts from when it became empty; for a group that only
// stores offsets, from each commit; for a stable consumer group, from
// each commit but only for topics it no longer subscribes to; other
// groups keep their offsets. An offset committed with a retention time of
// its own expires at its expire timestamp instead, under the same
// conditions. Offsets with a commit on the way stay.
func (c *Coordinator) expiredOffsets(g *group, now int64) map[topicPartition]bool {
	retention := c.config.OffsetsRetention.Milliseconds()
	expired := map[topicPartition]bool{}
	for tp, offset := range g.offsets { // order-independent: builds a set
		if g.pendingCommits[tp] > 0 {
			continue
		}
		var since int64
		switch {
		case g.protocolType != "" && g.is(stateEmpty):
			since = g.stateTimestamp
			if since < 0 {
				since = offset.commitTimestamp
			}
		case g.protocolType == "":
			since = offset.commitTimestamp
		case g.protocolType == consumerProtocolType && g.subscribedTopics != nil && g.is(stateStable):
			if g.subscribedTopics[tp.topic] {
				continue
			}
			since = offset.commitTimestamp
		default:
			continue
		}
		if offset.expired(since, now, retention) {
			expired[tp] = true
		}
	}
	return expired
}

// expired reports whether an eligible offset has expired, as Kafka's
// isOffsetExpired judges it: by its own expire timestamp when its commit
// asked for a retention time (v2-v4), else retention after since.
func (o committedOffset) expired(since, now, retention int64) bool {
	if o.expireTimestamp != 0 {
		return now >= o.expireTimestamp
	}
	return now-since >= retention
}
