package quorum

import (
	"fmt"
	"log/slog"
	"time"

	"sluice/core"
	corelog "sluice/core/log"
	"sluice/core/metadata"
	"sluice/core/peer"
)

// CommitFunc receives each committed metadata record with its offset in the
// metadata log, in log order, exactly once per process lifetime.
type CommitFunc func(offset int64, r metadata.Record)

// Snapshotter is the state machine the metadata log feeds, seen from the
// quorum's side: the controller's or broker's image.
type Snapshotter interface {
	// Snapshot returns records that rebuild the state as of the last
	// record delivered through CommitFunc, and that record's offset (-1
	// if none was).
	Snapshot() (lastOffset int64, records []metadata.Record)

	// Restore replaces the state with a snapshot's records: at Open, from
	// the newest snapshot on disk, or on a follower that fell behind the
	// leader's log start and downloaded the leader's. Records after
	// lastOffset then arrive through CommitFunc as usual.
	Restore(lastOffset int64, records []metadata.Record) error
}

// metadataSegmentBytes is the metadata log's segment size: the log is small
// and snapshots keep it so.
const metadataSegmentBytes = 64 << 20

// Quorum is one member of the metadata quorum: Raft over the metadata log,
// as KRaft runs it (KIP-595), with pre-vote (KIP-996), check-quorum and
// snapshots (KIP-630). It is used from its node's loop only.
//
// Every input is an event: a request from a peer (the Handle methods), an
// answer to a request it sent, a timer, a completed disk sync, or a call
// from the node (Propose, Resign). Each goes to the handler of that message
// type, which acts according to the node's role; roles change only through
// the become functions in roles.go, which check that the move is legal.
type Quorum struct {
	world  core.World
	logger *slog.Logger
	// events is the logger of the lines core.World's Events describes
	// (leadership won, snapshots taken, downloaded and restored), made
	// at the first (eventLogger).
	events      *slog.Logger
	config      Config
	dir         string
	peers       *peer.Client
	snapshotter Snapshotter
	onCommit    CommitFunc

	// voters are the voter ids, sorted; majority is how many of them make
	// a quorum. isVoter is false for an observer.
	voters   []int32
	majority int
	isVoter  bool

	metadataLog *corelog.Log

	// fetchAnswerRoom holds the answer to every Fetch this node answers,
	// one after the other: a Fetch's done is finished with its answer
	// when it returns (HandleFetch).
	fetchAnswerRoom metadataFetchAnswer

	// The election state, saved to the quorum-state file through state on
	// every change. Invariant: epoch never decreases; votedFor and
	// leaderID belong to epoch (noNode when none). leaderID is kept while
	// a follower tries a pre-vote, so that it can go back to following.
	epoch    int32
	votedFor int32
	leaderID int32
	state    *stateFile

	role role
	// generation counts role changes. Timers and answers armed in one
	// generation do nothing in a later one.
	generation uint64
	// electionTimer is the election timeout of an unattached, prospective
	// or candidate voter.
	electionTimer core.Timer
	// deferred are calls a role change owes (failing a former leader's
	// proposals, answering its held fetches), made once the new role is in
	// place so that none of them sees the node half-way.
	deferred []func()

	// Per-role state: leader is set iff role is roleLeader, election iff
	// role is roleProspective or roleCandidate, fetcher iff the node
	// fetches (a follower, or an observer looking for the leader).
	leader   *leaderState
	election *electionTally
	fetcher  *fetcherState

	// lastLeaderContact is when (Elapsed) this node last heard from the
	// leader it follows; a voter refuses pre-votes within FetchTimeout of
	// it.
	lastLeaderContact time.Duration

	// highWatermark is the offset below which the metadata log is known to
	// be committed. Invariant: it never decreases, and it is at most the
	// log's end, except while the log is being restarted at a snapshot
	// (logReset set).
	highWatermark int64
	// appliedEnd is the offset after the last record delivered to
	// onCommit (or restored from a snapshot). Invariant: it never
	// decreases, and appliedEnd <= highWatermark.
	appliedEnd int64
	// applying is set while records are being delivered, so that a
	// CommitFunc that proposes does not deliver re-entrantly.
	applying bool
	// encoded is the buffer proposals encode their records in, reused
	// from one proposal to the next (see encodeRecords).
	encoded []byte

	// snapshots are the snapshot files on disk, oldest first.
	snapshots []snapshotID
	// snapshotWriting is set while a snapshot is being written.
	snapshotWriting bool
	// logReset is the snapshot the log is being restarted at, nil when it
	// is not (see log_reset.go).
	logReset *snapshotID

	// caughtUp is set once delivery reached catchUpTarget, the first high
	// watermark learned in this process lifetime (-1 before one is); see
	// caught_up.go.
	caughtUp          bool
	catchUpTarget     int64
	caughtUpListeners []func()

	listeners []func(leaderID, epoch int32)
	// notified is the leader last announced to listeners.
	notified leaderAndEpoch

	// retiring is set by Resign: this node leads no more.
	retiring bool
	closed   bool
}

// leaderAndEpoch is a known leader (or noNode) and its epoch.
type leaderAndEpoch struct{ leaderID, epoch int32 }

// eventLogger is the member's logger of the lines core.World's Events
// describes, made at the first.
func (q *Quorum) eventLogger() *slog.Logger {
	if q.events == nil {
		q.events = q.world.EventLog().With("quorum", q.config.NodeID)
	}
	return q.events
}

// Open opens (or creates) the metadata log in dir, which also holds the
// quorum-state file and the snapshots, and recovers: the newest valid
// snapshot is restored through the Snapshotter, then every record known to
// be committed is delivered to onCommit before Open returns. A node that is
// the only voter knows its whole log is committed (no other node can ever
// lead); any other node knows only its snapshot, and receives the rest once
// it learns the leader's high watermark.
//
// peers must be a client dedicated to the controller listeners: Open sets
// each voter's address on it. It may be nil for a single voter.
// snapshotter may be nil when SnapshotEveryRecords is 0.
func Open(w core.World, dir string, config Config, peers *peer.Client, snapshotter Snapshotter, onCommit CommitFunc) (*Quorum, error) {
	config = config.withDefaults()
	if err := config.validate(); err != nil {
		return nil, err
	}
	q := &Quorum{
		world:       w,
		logger:      w.Log.With("quorum", config.NodeID),
		config:      config,
		dir:         dir,
		peers:       peers,
		snapshotter: snapshotter,
		onCommit:    onCommit,
		voters:      config.sortedVoters(),
		notified:    leaderAndEpoch{noNode, -1},
		// A sole voter knows its whole log committed at Open.
		catchUpTarget: -1,
	}
	q.majority = len(q.voters)/2 + 1
	_, q.isVoter = config.Voters[config.NodeID]
	switch {
	case config.SnapshotEveryRecords > 0 && snapshotter == nil:
		return nil, fmt.Errorf("quorum: SnapshotEveryRecords needs a Snapshotter")
	case peers == nil && !q.isSoleVoter():
		return nil, fmt.Errorf("quorum: a quorum of %d voters (this node a voter: %v) needs a peer client", len(q.voters), q.isVoter)
	}

	logConfig := corelog.DefaultConfig()
	logConfig.RetentionAge = corelog.Unlimited
	logConfig.SegmentBytes = metadataSegmentBytes
	l, err := corelog.Open(w, dir, logConfig)
	if err != nil {
		return nil, fmt.Errorf("quorum: metadata log: %w", err)
	}
	q.metadataLog = l
	if err := q.recover(); err != nil {
		l.Close()
		return nil, err
	}
	l.OnSynced(q.logSynced)
	// Recovery may have read bytes only the page cache held: a sync makes
	// them durable, and a follower reports nothing unsynced.
	l.Sync()
	for _, id := range q.voters {
		if id != config.NodeID {
			peers.SetAddress(id, config.Voters[id])
		}
	}
	q.start()
	return q, nil
}

// recover loads the election state and the newest snapshot, and delivers
// what is known to be committed.
func (q *Quorum) recover() error {
	loaded, _, err := loadElectionState(q.world.FS, q.dir)
	if err != nil {
		return err
	}
	q.state = newStateFile(q.world, q.dir, loaded)
	q.epoch, q.leaderID, q.votedFor = loaded.Epoch, loaded.LeaderID, loaded.VotedFor
	if logEpoch := q.metadataLog.LatestEpoch(); logEpoch > q.epoch {
		// The log holds batches of an epoch whose quorum-state write a
		// crash lost (a follower appends before it needs the file). The
		// log is the truth: this node lived in that epoch, whose vote
		// and leader it no longer knows.
		q.logger.Warn("the metadata log is ahead of quorum-state; taking its epoch", "state_epoch", q.epoch, "log_epoch", logEpoch)
		q.epoch, q.leaderID, q.votedFor = logEpoch, noNode, noNode
		q.saveState()
	}
	if err := q.loadSnapshots(); err != nil {
		return err
	}
	q.highWatermark = q.appliedEnd
	if q.isSoleVoter() {
		// A sole voter's log is its quorum: every batch in it was
		// written by this node as leader and no other node can ever
		// lead and overwrite it, so whatever recovery found is
		// committed. (A process crash followed by a power loss before
		// the next sync could take back a tail that was never
		// acknowledged, as it could in any single-node store.)
		q.highWatermark = max(q.highWatermark, q.metadataLog.EndOffset())
	}
	if err := q.applyUpTo(q.highWatermark); err != nil {
		return err
	}
	if q.isSoleVoter() {
		q.caughtUp = true
	}
	return nil
}

// start puts the node in its first role.
func (q *Quorum) start() {
	switch {
	case q.leaderID != noNode && q.leaderID != q.config.NodeID && q.isVoterID(q.leaderID):
		q.becomeFollower(q.epoch, q.leaderID)
	default:
		// A node that led before the crash cannot lead the same epoch
		// again: it waits, as a resigned leader does, for a new
		// election.
		q.becomeUnattached(q.epoch, q.randomElectionTimeout())
	}
	if q.isSoleVoter() {
		// No one else can lead: campaign at once.
		q.becomeProspective()
	}
}

// Leader reports the leader of the current epoch, if this node knows it. A
// leader reports itself once it accepts proposals.
func (q *Quorum) Leader() (leaderID int32, epoch int32, known bool) {
	id := q.knownLeader()
	return id, q.epoch, id != noNode
}

// IsLeader reports whether this node is the leader and accepts proposals.
func (q *Quorum) IsLeader() bool { return q.role == roleLeader && q.leader.ready }

// HighWatermark is the offset below which the metadata log is known to be
// committed.
func (q *Quorum) HighWatermark() int64 { return q.highWatermark }

// AppliedOffset is the offset after the last record delivered to the
// CommitFunc or restored from a snapshot.
func (q *Quorum) AppliedOffset() int64 { return q.appliedEnd }

// OnLeaderChange registers f, called on the loop each time the known leader
// or the epoch changes: with leaderID noNode (-1) when no leader is known.
// A controller becomes active when leaderID is its own node id and inactive
// on any other call; brokers refresh their view of the controller.
func (q *Quorum) OnLeaderChange(f func(leaderID, epoch int32)) {
	if len(q.listeners) >= listenersMax {
		panic(fmt.Sprintf("quorum: more than %d OnLeaderChange functions", listenersMax))
	}
	q.listeners = append(q.listeners, f)
}

// knownLeader is the leader of the current epoch as far as this node may
// tell others: its followed leader, itself once ready, or noNode.
func (q *Quorum) knownLeader() int32 {
	switch {
	case q.role == roleFollower:
		return q.leaderID
	case q.role == roleLeader && q.leader.ready:
		return q.config.NodeID
	}
	return noNode
}

// notifyLeaderChange tells the listeners if the known leader or epoch
// changed since it last did.
func (q *Quorum) notifyLeaderChange() {
	now := leaderAndEpoch{q.knownLeader(), q.epoch}
	if now == q.notified || q.closed {
		return
	}
	q.notified = now
	for _, f := range q.listeners {
		f(now.leaderID, now.epoch)
	}
}

// Close releases the metadata log and stops every timer. Pending proposals
// fail with ErrClosed. Nothing is called after Close.
func (q *Quorum) Close() error {
	if q.closed {
		return nil
	}
	q.closed = true
	q.state.closed = true
	if q.leader != nil {
		q.leader.failProposals(ErrClosed)
	}
	q.leaveRole()
	q.runDeferred()
	return q.metadataLog.Close()
}

func (q *Quorum) isSoleVoter() bool { return q.isVoter && len(q.voters) == 1 }

func (q *Quorum) isVoterID(id int32) bool {
	_, ok := q.config.Voters[id]
	return ok
}

// saveState hands the election state to the quorum-state file.
func (q *Quorum) saveState() {
	q.state.save(electionState{Epoch: q.epoch, LeaderID: q.leaderID, VotedFor: q.votedFor})
}

// afterStateDurable calls f once the election state as it is now is on
// disk, unless the role changed meanwhile or the quorum closed. Raft's rule:
// persist before answering a vote or acting in a new epoch.
func (q *Quorum) afterStateDurable(f func()) {
	generation := q.generation
	q.state.afterDurable(func() {
		if q.generation == generation && !q.closed {
			f()
		}
	})
}

// after calls f once d has elapsed, unless the role changed meanwhile.
func (q *Quorum) after(d time.Duration, f func()) core.Timer {
	return q.world.Clock.AfterFunc(d, q.inThisRole(f))
}

// inThisRole wraps f so that it does nothing once the role has changed or
// the quorum closed. A callback a role arms again and again (a follower's
// fetch timeout and fetch answers, a leader's held fetches) is wrapped
// once, when the role starts using it, and kept in the role's state: one
// allocation per role rather than one or two per fetch.
func (q *Quorum) inThisRole(f func()) func() {
	generation := q.generation
	return func() {
		if q.generation == generation && !q.closed {
			f()
		}
	}
}

// randomElectionTimeout draws an election timeout in [T, 2T] from the
// World's entropy, so that voters rarely time out together (Raft §5.2).
//
// BUGGIFY: the shortest timeout of the range, every time, so voters time
// out together and split their votes far more often than chance allows;
// pre-vote and the randomized retry must still elect a leader.
func (q *Quorum) randomElectionTimeout() time.Duration {
	t := q.config.ElectionTimeout
	if q.world.Buggify.Hit(core.BuggifyQuorumElectionTimeoutShortest) {
		return t
	}
	return core.RandomDuration(q.world.Entropy, t, 2*t)
}

// checkInvariants panics if the quorum's state is impossible. It runs after
// every role change and every advance of the high watermark.
func (q *Quorum) checkInvariants() {
	end := q.metadataLog.EndOffset()
	switch {
	case q.appliedEnd > q.highWatermark:
		panic(fmt.Sprintf("quorum: applied end %d above the high watermark %d", q.appliedEnd, q.highWatermark))
	case q.highWatermark > end && q.logReset == nil:
		panic(fmt.Sprintf("quorum: high watermark %d above the log end %d", q.highWatermark, end))
	case (q.role == roleLeader) != (q.leader != nil):
		panic(fmt.Sprintf("quorum: role %v with leader state %v", q.role, q.leader != nil))
	case (q.role == roleProspective || q.role == roleCandidate) != (q.election != nil):
		panic(fmt.Sprintf("quorum: role %v with election %v", q.role, q.election != nil))
	case q.role == roleLeader && (q.votedFor != q.config.NodeID || q.leaderID != q.config.NodeID):
		panic(fmt.Sprintf("quorum: leader of epoch %d voted for %d and names leader %d", q.epoch, q.votedFor, q.leaderID))
	case q.role == roleFollower && (q.leaderID == noNode || q.leaderID == q.config.NodeID):
		panic(fmt.Sprintf("quorum: follower of leader %d", q.leaderID))
	case !q.isVoter && q.role != roleUnattached && q.role != roleFollower:
		panic(fmt.Sprintf("quorum: observer in role %v", q.role))
	}
}
