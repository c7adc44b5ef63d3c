package replica

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/core"
	corelog "sluice/core/log"
	"sluice/core/metadata"
	"sluice/core/producer"
)

// Partition is one replica of one partition, on this node.
type Partition struct {
	w      core.World
	logger *slog.Logger
	dir    string
	nodeID int32

	Topic   string
	Index   int32
	TopicID metadata.TopicID

	config    Config
	log       *corelog.Log
	producers *producer.State
	snapshots *producerSnapshots

	// Replication state, from the metadata log.
	leader         int32
	leaderEpoch    int32
	partitionEpoch int32
	replicas       []int32
	isr            []int32

	// highWatermark is the first offset not yet committed. Invariant:
	// StartOffset <= highWatermark <= EndOffset, and it never goes back
	// while this replica leads one epoch.
	highWatermark int64

	// ackWaiters are acks=all produces waiting for the high watermark,
	// in offset order.
	ackWaiters []*AckWaiter
	// highWatermarkListeners run after the high watermark moves (fetch
	// long-polls wake up).
	highWatermarkListeners []func()
	// leadershipListeners run when IsLeader may have changed.
	leadershipListeners []func()

	// unflushedMessages counts records appended since the last sync, for
	// flush.messages in page-cache mode.
	unflushedMessages int64
	flushTimer        core.Timer

	// recovered is set once everything recovery found in the log is
	// known durable. Before that the high watermark would have to be
	// guessed, so the replica refuses to lead (NOT_LEADER_OR_FOLLOWER,
	// which clients retry) rather than expose a watermark that moved
	// back below what consumers already read.
	recovered bool

	closed bool
}

// Identity names a partition replica.
type Identity struct {
	Topic   string
	Index   int32
	TopicID metadata.TopicID
	NodeID  int32
}

// Open opens or creates the partition's log in dir and rebuilds its
// producer state. The replica starts as neither leader nor follower; the
// broker applies the metadata's decision with BecomeLeader.
func Open(w core.World, dir string, id Identity, config Config) (*Partition, error) {
	l, err := corelog.Open(w, dir, config.Log)
	if err != nil {
		return nil, err
	}
	p := &Partition{
		w:         w,
		logger:    w.Log.With("partition", fmt.Sprintf("%s-%d", id.Topic, id.Index)),
		dir:       dir,
		nodeID:    id.NodeID,
		Topic:     id.Topic,
		Index:     id.Index,
		TopicID:   id.TopicID,
		config:    config,
		log:       l,
		leader:    -1,
		snapshots: newProducerSnapshots(w, dir),
	}
	if err := p.rebuildProducerState(); err != nil {
		l.Close()
		return nil, err
	}
	p.highWatermark = l.StartOffset()
	// What recovery kept is on disk, but only a sync can say it is
	// durable: after a power loss it would be, after a process crash it
	// may sit in the page cache. Until that sync completes this replica
	// knows no high watermark, so it serves nothing (see recovered).
	recoveredEnd := l.EndOffset()
	p.recovered = l.SyncedOffset() >= recoveredEnd
	l.OnSynced(func(synced int64) {
		if !p.recovered && synced >= recoveredEnd {
			p.recovered = true
			p.logger.Debug("recovered log is durable", "end", recoveredEnd)
			p.updateHighWatermark()
			p.leadershipChanged()
			return
		}
		p.updateHighWatermark()
	})
	l.Sync()
	return p, nil
}

// BecomeLeader makes this replica the leader for epoch, as the metadata
// log decided.
func (p *Partition) BecomeLeader(leaderEpoch, partitionEpoch int32, replicas, isr []int32) {
	if leaderEpoch < p.leaderEpoch {
		panic(fmt.Sprintf("replica: %s-%d leader epoch went back from %d to %d", p.Topic, p.Index, p.leaderEpoch, leaderEpoch))
	}
	p.leader = p.nodeID
	p.leaderEpoch = leaderEpoch
	p.partitionEpoch = partitionEpoch
	p.replicas = slices.Clone(replicas)
	p.isr = slices.Clone(isr)
	p.updateHighWatermark()
	p.leadershipChanged()
}

// OnLeadershipChange registers f to run whenever IsLeader may have changed
// value: the replica became leader, finished recovery, or closed.
func (p *Partition) OnLeadershipChange(f func()) {
	p.leadershipListeners = append(p.leadershipListeners, f)
}

func (p *Partition) leadershipChanged() {
	for _, f := range p.leadershipListeners {
		f()
	}
}

// IsLeader reports whether this replica leads its partition and can serve
// as leader: open, and done with recovery.
func (p *Partition) IsLeader() bool { return !p.closed && p.recovered && p.leader == p.nodeID }

// LeaderEpoch is the epoch of the current leadership.
func (p *Partition) LeaderEpoch() int32 { return p.leaderEpoch }

// HighWatermark is the first offset not yet committed.
func (p *Partition) HighWatermark() int64 { return p.highWatermark }

// LogStartOffset is the first offset still in the log.
func (p *Partition) LogStartOffset() int64 { return p.log.StartOffset() }

// LogEndOffset is the offset the next append gets.
func (p *Partition) LogEndOffset() int64 { return p.log.EndOffset() }

// Config is the partition's current settings.
func (p *Partition) Config() Config { return p.config }

// SetConfig applies changed topic settings.
func (p *Partition) SetConfig(config Config) error {
	if err := p.log.SetConfig(config.Log); err != nil {
		return err
	}
	p.config = config
	p.updateHighWatermark()
	return nil
}

// OnHighWatermark registers f to run whenever the high watermark moves.
func (p *Partition) OnHighWatermark(f func()) {
	p.highWatermarkListeners = append(p.highWatermarkListeners, f)
}

// acknowledgedOffset is how far this replica's own log counts toward the
// high watermark: synced data under the durable default, all of it in
// page-cache mode.
func (p *Partition) acknowledgedOffset() int64 {
	if p.config.Durable && !p.w.Canaries.On(CanaryAcksBeforeSync) {
		return p.log.SyncedOffset()
	}
	return p.log.EndOffset()
}

// updateHighWatermark moves the high watermark up to what every in-sync
// replica has acknowledged, unless the ISR is smaller than
// min.insync.replicas, and completes the acks it now covers.
func (p *Partition) updateHighWatermark() {
	if !p.IsLeader() || len(p.isr) < p.config.MinInsyncReplicas {
		return
	}
	candidate := p.acknowledgedOffset()
	for _, replica := range p.isr {
		if replica == p.nodeID {
			continue
		}
		// Followers arrive with replication; until then an ISR with
		// another member cannot commit anything this node alone has.
		candidate = min(candidate, p.highWatermark)
	}
	if candidate <= p.highWatermark {
		return
	}
	if candidate > p.log.EndOffset() {
		panic(fmt.Sprintf("replica: %s-%d high watermark %d above the log end %d", p.Topic, p.Index, candidate, p.log.EndOffset()))
	}
	p.highWatermark = candidate
	p.completeAckWaiters()
	for _, f := range p.highWatermarkListeners {
		f()
	}
}

// Close closes the log; waiters fail with NOT_LEADER_OR_FOLLOWER, since
// whoever serves the partition next is not this instance.
func (p *Partition) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	if p.flushTimer != nil {
		p.flushTimer.Stop()
	}
	p.failAckWaiters(kerr.NotLeaderForPartition)
	return p.log.Close()
}

// Sync asks for a group-commit sync of the log (used at shutdown and by the
// flush timer).
func (p *Partition) Sync() { p.log.Sync() }

// SyncedOffset is how far the log is durable.
func (p *Partition) SyncedOffset() int64 { return p.log.SyncedOffset() }

// kafkaError maps a log error to the Kafka error a client should see.
func kafkaError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, corelog.ErrOffsetOutOfRange):
		return kerr.OffsetOutOfRange
	case errors.Is(err, corelog.ErrCorrupt):
		return kerr.KafkaStorageError
	case errors.Is(err, corelog.ErrInvalidBatch):
		return kerr.InvalidRecord
	case errors.Is(err, corelog.ErrEpochWentBack):
		return kerr.FencedLeaderEpoch
	case errors.Is(err, corelog.ErrTruncationNotDurable):
		return kerr.NotEnoughReplicas
	case errors.Is(err, corelog.ErrClosed), errors.Is(err, corelog.ErrHalted):
		return kerr.NotLeaderForPartition
	case errors.Is(err, core.ErrDiskFull):
		return kerr.KafkaStorageError
	default:
		return kerr.KafkaStorageError
	}
}
