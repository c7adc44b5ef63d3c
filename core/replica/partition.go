package replica

import (
	"errors"
	"fmt"
	"log/slog"

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
	// events is the logger of the lines core.World's Events describes
	// (leadership won, records compacted away), made at the first
	// (eventLogger): most replicas never log one. name is the
	// partition's name in both loggers' lines ("orders-0").
	events *slog.Logger
	name   string
	dir    string
	nodeID int32

	Topic   string
	Index   int32
	TopicID metadata.TopicID

	config    Config
	log       *corelog.Log
	producers *producer.State
	snapshots *producerSnapshots

	// Replication state, from the metadata log (roles.go).
	role           role
	leader         int32
	leaderEpoch    int32
	partitionEpoch int32
	replicas       []int32
	// uncleanEpoch is the leader epoch of the partition's latest leader
	// elected outside the ISR, 0 if none ever was (metadata's
	// Partition.UncleanEpoch): from then on a follower may have to cut
	// below its high watermark (follower_truncate.go).
	uncleanEpoch int32
	// isr is the committed ISR: what the metadata log says. A leader's
	// proposed change lives in proposal until the metadata shows it.
	isr []int32
	// generation counts role changes: every new leadership and every new
	// leader to follow. A fetch answer or ISR answer made for an older
	// generation is ignored.
	generation uint64
	// replication is how a leader reaches the controller and learns about
	// other brokers; nil on a node that never replicates.
	replication Replication

	// highWatermark is the first offset not yet committed. Invariant:
	// StartOffset <= highWatermark <= EndOffset, and it never goes back
	// except where a follower must truncate below it after an unclean
	// election or a lost page cache (follower_truncate.go).
	highWatermark int64

	// Leader state (leader_*.go, isr_changes.go).
	//
	// followers tracks every other replica, in replica order.
	followers []*followerState
	// epochStartOffset is the log end when this leadership began: a
	// follower joins the ISR only once it has reached it.
	epochStartOffset int64
	// proposal is the ISR change sent to the controller and not yet
	// settled by the metadata; nil when none is. At most one at a time.
	proposal       *ISRProposal
	proposalsMade  uint64
	leaderAppended []func()

	// Follower state (follower_*.go).
	//
	// leaderHighWatermark is the high watermark the leader last
	// reported, -1 before its first answer in this generation.
	leaderHighWatermark int64
	// durabilityWaits counts the log.WhenDurable calls this follower
	// waits on (after a truncation, or with records held back by one);
	// it fetches again only when none is left.
	durabilityWaits int
	// held are fetched records that could not be appended until a
	// truncation became durable; nil when none are.
	held *heldRecords
	// fetchReady are told when the follower is ready to fetch again.
	fetchReady []func()

	// ackWaiters are acks=all produces waiting for the high watermark,
	// in offset order.
	ackWaiters []*AckWaiter
	// pendingDeletes are DeleteRecords waiting for their move to hold
	// (delete_records.go).
	pendingDeletes []*pendingDelete
	// highWatermarkListeners run after the high watermark moves (fetch
	// long-polls wake up).
	highWatermarkListeners []func()
	// leadershipListeners run when IsLeader may have changed.
	leadershipListeners []func()

	// unflushedMessages counts records appended since the last sync, for
	// flush.messages in page-cache mode.
	unflushedMessages int64
	flushTimer        core.Timer

	// departed are the replicas reassignments removed lately, which
	// the low watermark still counts (departed.go).
	departed      []departedReplica
	departedTimer core.Timer

	// formerLeaders are the brokers that led before this leadership and
	// may still serve, which hold the high watermark (takeover.go).
	formerLeaders []FormerLeader
	takeoverTimer core.Timer

	// recovered is set once everything recovery found in the log is
	// known durable. Before that the high watermark would have to be
	// guessed, so the replica refuses to lead (NOT_LEADER_OR_FOLLOWER,
	// which clients retry) rather than expose a watermark that moved
	// back below what consumers already read.
	recovered bool
	// recoveredEnd is the offset a sync must reach for recovered: where
	// recovery ended, or lower where a truncation since cut the log (what
	// it cut is no longer there to become durable; see afterTruncation).
	recoveredEnd int64
	// topicIDPending is set until the directory's partition.metadata
	// is durable (topic_id_file.go): until then the replica is not
	// recovered and does not fetch, so no record reaches a directory
	// that does not yet say whose it is.
	topicIDPending bool

	closed bool
}

// Identity names a partition replica.
type Identity struct {
	Topic   string
	Index   int32
	TopicID metadata.TopicID
	NodeID  int32
}

// eventLogger is the partition's logger of the lines core.World's Events
// describes, made at the first.
func (p *Partition) eventLogger() *slog.Logger {
	if p.events == nil {
		p.events = p.w.EventLog().With("partition", p.name)
	}
	return p.events
}

// Open opens or creates the partition's log in dir and rebuilds its
// producer state. The replica starts in no role; the broker applies the
// metadata's decision with BecomeLeader or BecomeFollower.
//
// A directory that belongs to another topic id (a deleted topic of the same
// name) is refused with an *OtherTopicIDError, before anything in it is
// read (see topic_id_file.go).
func Open(w core.World, dir string, id Identity, config Config) (*Partition, error) {
	found, hasFile, err := readTopicIDFile(w, dir)
	if err != nil {
		return nil, err
	}
	if hasFile && found != id.TopicID && !w.Canaries.On(CanaryIgnoreTopicID) {
		return nil, &OtherTopicIDError{Dir: dir, Found: found, Want: id.TopicID}
	}
	l, err := corelog.Open(w, dir, config.Log)
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s-%d", id.Topic, id.Index)
	p := &Partition{
		w:                   w,
		logger:              w.Log.With("partition", name),
		name:                name,
		dir:                 dir,
		nodeID:              id.NodeID,
		Topic:               id.Topic,
		Index:               id.Index,
		TopicID:             id.TopicID,
		config:              config,
		log:                 l,
		leader:              -1,
		leaderHighWatermark: -1,
		snapshots:           newProducerSnapshots(w, dir),
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
	p.recoveredEnd = l.EndOffset()
	p.topicIDPending = !hasFile
	p.recovered = l.SyncedOffset() >= p.recoveredEnd && !p.topicIDPending
	l.OnSynced(func(int64) {
		p.maybeRecovered()
		p.synced()
	})
	l.Sync()
	if p.topicIDPending {
		p.writeTopicIDFile()
	}
	return p, nil
}

// maybeRecovered marks the replica recovered once a sync covers
// recoveredEnd, and lets it take up its role: it knows its high watermark
// now.
func (p *Partition) maybeRecovered() {
	if p.recovered || p.topicIDPending || p.log.SyncedOffset() < p.recoveredEnd {
		return
	}
	p.recovered = true
	p.logger.Debug("recovered log is durable", "end", p.recoveredEnd)
	p.updateHighWatermark()
	p.leadershipChanged()
}

// synced runs after every completed sync: the leader's own acknowledged
// offset may have moved, and so may a durable follower's.
func (p *Partition) synced() {
	switch p.role {
	case roleLeader:
		p.updateHighWatermark()
	case roleFollower:
		p.advanceFollowerHighWatermark()
		p.notifyFetchReady()
	}
}

// SetReplication connects the partition to its node: how a leader asks
// the controller to change the ISR, and what the metadata says of other
// brokers. Without it a leader never changes its ISR.
func (p *Partition) SetReplication(r Replication) { p.replication = r }

// HighWatermark is the first offset not yet committed.
func (p *Partition) HighWatermark() int64 { return p.highWatermark }

// LogStartOffset is the first offset still in the log.
func (p *Partition) LogStartOffset() int64 { return p.log.StartOffset() }

// LogEndOffset is the offset the next append gets.
func (p *Partition) LogEndOffset() int64 { return p.log.EndOffset() }

// Size is the bytes of the log's segments that readers can reach.
func (p *Partition) Size() int64 { return p.log.Size() }

// Config is the partition's current settings.
func (p *Partition) Config() Config { return p.config }

// SetConfig applies changed topic settings.
func (p *Partition) SetConfig(config Config) error {
	if err := p.log.SetConfig(config.Log); err != nil {
		return err
	}
	p.config = config
	p.updateHighWatermark()
	p.failAcksIfUnderMinISR()
	return nil
}

// OnHighWatermark registers f to run whenever the high watermark moves.
func (p *Partition) OnHighWatermark(f func()) {
	p.highWatermarkListeners = append(p.highWatermarkListeners, f)
}

// Close closes the log; waiters fail with NOT_LEADER_OR_FOLLOWER, since
// whoever serves the partition next is not this instance.
func (p *Partition) Close() error {
	if p.closed {
		return nil
	}
	wasLeader := p.IsLeader()
	p.closed = true
	if p.flushTimer != nil {
		p.flushTimer.Stop()
	}
	if p.departedTimer != nil {
		p.departedTimer.Stop()
	}
	p.stopTakeover()
	p.stopLeading()
	p.held = nil
	p.snapshots.close()
	if wasLeader {
		p.leadershipChanged()
	}
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
	case errors.Is(err, corelog.ErrTruncationNotDurable), errors.Is(err, corelog.ErrSwapNotFinished):
		// Retriable: the sync round under way lifts the refusal.
		return kerr.NotEnoughReplicas
	case errors.Is(err, corelog.ErrClosed), errors.Is(err, corelog.ErrHalted):
		return kerr.NotLeaderForPartition
	case errors.Is(err, core.ErrDiskFull):
		return kerr.KafkaStorageError
	default:
		return kerr.KafkaStorageError
	}
}
