package group

import (
	"bytes"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/batch"
)

// loadRetryDelay is how long loading waits after a failed read before it
// tries again (the partition may be moving; Unload then stops it).
const loadRetryDelay = time.Second

// loader replays one offsets partition into groups and offsets. It reads
// a chunk per turn of the loop, up to the log end as it was when loading
// began: the new leader's whole log, including a tail its predecessor
// wrote that is not yet committed, is what the partition will hold, so
// loading finishes only once the high watermark covers it.
type loader struct {
	c *Coordinator
	p *partitionState

	// position is the next offset to replay.
	position int64
	// target is the log end offset at the first read; -1 before it.
	target int64
	// waiting is set while the high watermark is below target and
	// everything below it has been replayed.
	waiting bool
	timer   core.Timer
	stopped bool

	// What the records say so far, later records winning: each group's
	// metadata (absent after a tombstone) and committed offsets.
	metadata map[string]*kmsg.GroupMetadataValue
	offsets  map[string]map[topicPartition]committedOffset
	records  int
	skipped  int
}

// startLoading begins replaying p on the next turn of the loop.
func (c *Coordinator) startLoading(p *partitionState) {
	l := &loader{
		c: c, p: p, target: -1,
		metadata: map[string]*kmsg.GroupMetadataValue{},
		offsets:  map[string]map[topicPartition]committedOffset{},
	}
	p.loader = l
	l.next(0)
}

func (l *loader) next(delay time.Duration) {
	l.timer = l.c.w.Clock.AfterFunc(delay, l.step)
}

func (l *loader) stop() {
	l.stopped = true
	if l.timer != nil {
		l.timer.Stop()
	}
}

// highWatermarkMoved resumes a loader waiting for the high watermark.
func (l *loader) highWatermarkMoved() {
	if l.waiting && !l.stopped {
		l.waiting = false
		l.next(0)
	}
}

// step replays one chunk.
func (l *loader) step() {
	l.timer = nil
	if l.stopped {
		return
	}
	result, err := l.c.storage.Read(l.p.index, l.position, loadReadBytes)
	if err != nil {
		l.c.logger.Warn("cannot read offsets partition; retrying", "partition", l.p.index, "error", err)
		l.next(loadRetryDelay)
		return
	}
	if l.target < 0 {
		l.target = result.LogEndOffset
	}
	if l.position < result.LogStartOffset {
		l.position = result.LogStartOffset
	}
	before := l.position
	l.replay(result.Batches)
	switch {
	case l.position >= l.target:
		l.finish()
	case l.position >= result.HighWatermark:
		l.waiting = true
	case l.position == before:
		// Below the high watermark yet nothing to read: the log
		// disagrees with itself. Say so, and skip to what it has.
		l.c.logger.Error("offsets partition returned nothing below its high watermark; skipping ahead",
			"partition", l.p.index, "from", l.position, "to", result.HighWatermark)
		l.position = result.HighWatermark
		l.next(0)
	default:
		l.next(0)
	}
}

// replay applies the records of batches from position on.
func (l *loader) replay(batches []byte) {
	s := batch.Scanner{Buf: batches}
	for s.Next() {
		h := s.Header()
		if h.NextOffset() <= l.position {
			continue
		}
		if h.IsControl() {
			l.position = h.NextOffset()
			continue
		}
		records, err := batch.Records(s.Batch())
		if err != nil {
			// Compressed (Sluice never compresses its own), or
			// malformed: what it held cannot be known here.
			l.c.logger.Error("cannot decode an offsets batch; skipped", "partition", l.p.index,
				"offset", h.BaseOffset, "error", err)
			l.skipped += int(h.RecordCount)
			l.position = h.NextOffset()
			continue
		}
		for _, r := range records {
			if h.BaseOffset+int64(r.OffsetDelta) >= l.position {
				l.apply(r)
			}
		}
		l.position = h.NextOffset()
	}
	if s.Err() != nil {
		l.c.logger.Error("offsets partition read ended in bad bytes", "partition", l.p.index, "error", s.Err())
	}
}

// apply replays one record.
func (l *loader) apply(r batch.Record) {
	decoded, err := decodeRecord(r)
	if err != nil {
		if !errors.Is(err, errUnknownRecord) {
			l.c.logger.Error("cannot decode an offsets record; skipped", "partition", l.p.index, "error", err)
		}
		l.skipped++
		return
	}
	l.records++
	if !decoded.isOffset {
		if decoded.metadata == nil {
			delete(l.metadata, decoded.groupID)
		} else {
			l.metadata[decoded.groupID] = decoded.metadata
		}
		return
	}
	offsets := l.offsets[decoded.groupID]
	if decoded.offset == nil {
		delete(offsets, decoded.tp)
		if len(offsets) == 0 {
			delete(l.offsets, decoded.groupID)
		}
		return
	}
	if offsets == nil {
		offsets = map[topicPartition]committedOffset{}
		l.offsets[decoded.groupID] = offsets
	}
	offsets[decoded.tp] = *decoded.offset
}

// finish builds the partition's groups from what was replayed and starts
// serving them: members of a loaded generation must heartbeat within
// their session timeout, as after any coordinator move.
func (l *loader) finish() {
	c, p := l.c, l.p
	p.loader = nil
	ids := map[string]bool{}
	for id := range l.metadata { // order-independent: builds a set
		ids[id] = true
	}
	for id := range l.offsets { // order-independent: builds a set
		ids[id] = true
	}
	now := c.now()
	for _, id := range sortedKeys(ids) {
		g := newGroup(id, p, stateEmpty, now)
		if value := l.metadata[id]; value != nil {
			l.restore(g, value)
		}
		if offsets := l.offsets[id]; offsets != nil {
			g.offsets = offsets
		}
		p.groups[id] = g
		c.groupCount++
	}
	for _, id := range sortedKeys(p.groups) {
		g := p.groups[id]
		for _, m := range g.members {
			c.scheduleSession(g, m, c.sessionCheckTimeout(m))
		}
		if len(g.members) > c.config.maxMembers() {
			c.prepareRebalance(g, "the loaded group is over group.max.size")
		}
	}
	c.logger.Info("loaded offsets partition", "partition", p.index, "groups", len(p.groups),
		"records", l.records, "skipped", l.skipped, "end_offset", l.position)
}

// restore rebuilds a group's last generation from its metadata record:
// Stable with its members and their assignments, or Empty.
func (l *loader) restore(g *group, value *kmsg.GroupMetadataValue) {
	g.protocolType = value.ProtocolType
	g.generation = value.Generation
	g.stateTimestamp = value.CurrentStateTimestamp
	if value.Protocol != nil {
		g.protocolName = *value.Protocol
	}
	if len(value.Members) > 0 && g.protocolName == "" {
		l.c.logger.Error("group metadata has members but no protocol; loading it empty", "group", g.id)
		return
	}
	for _, stored := range value.Members {
		if g.has(stored.MemberID) || stored.MemberID == "" {
			l.c.logger.Error("group metadata names a member twice or without id; skipped", "group", g.id, "member", stored.MemberID)
			continue
		}
		m := &member{
			id:                 stored.MemberID,
			instanceID:         cloneString(stored.InstanceID),
			clientID:           stored.ClientID,
			clientHost:         stored.ClientHost,
			rebalanceTimeoutMs: stored.RebalanceTimeoutMillis,
			sessionTimeoutMs:   stored.SessionTimeoutMillis,
			protocolType:       value.ProtocolType,
			protocols:          []protocol{{name: g.protocolName, metadata: bytes.Clone(stored.Subscription)}},
			assignment:         bytes.Clone(stored.Assignment),
		}
		if m.rebalanceTimeoutMs < 0 {
			m.rebalanceTimeoutMs = m.sessionTimeoutMs // written before KIP-62
		}
		g.members = append(g.members, m)
		g.byID[m.id] = m
		g.countProtocols(m, 1)
		if m.instanceID != nil {
			g.staticMembers[*m.instanceID] = m.id
		}
	}
	if len(g.members) == 0 {
		g.protocolName = ""
		return
	}
	g.state = stateStable
	if value.Leader != nil && g.has(*value.Leader) {
		g.leaderID = *value.Leader
	} else {
		g.leaderID = g.members[0].id
	}
	g.subscribedTopics = g.computeSubscribedTopics()
}
