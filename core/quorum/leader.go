package quorum

import (
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/batch"
	"sluice/core/metadata"
)

// leaderState is what a leader keeps about its epoch.
type leaderState struct {
	// ready is set once the epoch's LeaderChange batch is appended; only
	// then are proposals accepted and is the leadership announced.
	ready bool
	// epochStartOffset is the offset of that batch, -1 before. The high
	// watermark moves only past it (Raft §5.4.2: a leader commits entries
	// of earlier epochs only by committing one of its own).
	epochStartOffset int64
	// granted are the voters that voted for this leader.
	granted []int32

	// replicas are the other voters and the observers that fetched, by
	// id; replicaIDs lists them sorted, for every walk over them.
	replicas   map[int32]*replicaProgress
	replicaIDs []int32

	// proposals are appended and not yet committed, in log order.
	// Invariant: their last offsets increase and are at least appliedEnd.
	proposals []proposal

	// The leader's timers, stopped when it stops leading: the retry of
	// the LeaderChange append, check-quorum, and the next
	// BeginQuorumEpoch round.
	appendTimer, checkQuorumTimer, announceTimer core.Timer
}

// stopTimers stops the leader's timers.
func (l *leaderState) stopTimers() {
	for _, t := range []core.Timer{l.appendTimer, l.checkQuorumTimer, l.announceTimer} {
		if t != nil {
			t.Stop()
		}
	}
}

// replicaProgress is what the leader knows of one other replica.
type replicaProgress struct {
	id    int32
	voter bool
	// syncedEnd is the fetch offset of the replica's last valid fetch in
	// this epoch: its log matches the leader's below it, and (followers
	// fetch only once their log is synced) is durable there. -1 before.
	syncedEnd int64
	// fetched is set once the replica fetched in this epoch; lastFetch is
	// when (Elapsed), or the epoch's start before it did.
	fetched   bool
	lastFetch time.Duration
	// Wall-clock milliseconds for DescribeQuorum, -1 when unknown.
	lastFetchMillis    int64
	lastCaughtUpMillis int64
	// sentHighWatermark is the high watermark the last answer told it.
	sentHighWatermark int64
	// held is its Fetch the leader holds for new data, nil if none; it
	// points at heldSlot. expireHeld answers it when its wait is over
	// (made at the first hold, see HandleFetch).
	held       *heldFetch
	heldSlot   heldFetch
	expireHeld func()
}

// proposal is one Propose call waiting for its records to commit.
type proposal struct {
	lastOffset int64
	done       func(lastOffset int64, err error)
}

func newLeaderState(q *Quorum, granted []int32) *leaderState {
	l := &leaderState{epochStartOffset: -1, granted: granted, replicas: map[int32]*replicaProgress{}}
	now := q.world.Clock.Elapsed()
	for _, id := range q.voters {
		if id != q.config.NodeID {
			l.addReplica(id, true, now)
		}
	}
	return l
}

func (l *leaderState) addReplica(id int32, voter bool, now time.Duration) *replicaProgress {
	p := &replicaProgress{id: id, voter: voter, syncedEnd: -1, lastFetch: now, lastFetchMillis: -1, lastCaughtUpMillis: -1}
	l.replicas[id] = p
	l.replicaIDs = append(l.replicaIDs, id)
	sort.Slice(l.replicaIDs, func(i, j int) bool { return l.replicaIDs[i] < l.replicaIDs[j] })
	return p
}

// startLeading begins the epoch: the LeaderChange batch, then the periodic
// duties.
func (q *Quorum) startLeading() {
	q.appendLeaderChange()
	q.leader.checkQuorumTimer = q.after(q.checkQuorumInterval(), q.checkQuorum)
}

// appendLeaderChange appends the epoch's first batch. The log may refuse
// it for a while (a truncation made as a follower not yet durable, a full
// disk); the leader retries and accepts no proposals meanwhile.
func (q *Quorum) appendLeaderChange() {
	l := q.leader
	b := leaderChangeBatch(q.config.NodeID, q.voters, l.granted, q.world.Clock.Now().UnixMilli())
	info, err := q.metadataLog.Append(b, q.epoch)
	if err != nil {
		q.logger.Warn("leader change not appended; retrying", "epoch", q.epoch, "error", err)
		l.appendTimer = q.after(retryBackoff, q.appendLeaderChange)
		return
	}
	l.epochStartOffset = info.FirstOffset
	l.ready = true
	q.metadataLog.Sync()
	q.logger.Info("leading", "epoch", q.epoch, "epoch_start", info.FirstOffset)
	q.announceLeadership()
	q.notifyLeaderChange()
	q.maybeCommit() // a sole voter's synced log may already commit it
}

// announceLeadership sends BeginQuorumEpoch to every voter that has not
// fetched recently, and again every half FetchTimeout: a voter that missed
// the first one (it was down, or cut off) learns who leads.
func (q *Quorum) announceLeadership() {
	l := q.leader
	now := q.world.Clock.Elapsed()
	interval := q.config.FetchTimeout / 2
	generation := q.generation
	for _, id := range l.replicaIDs {
		p := l.replicas[id]
		if !p.voter || (p.fetched && now-p.lastFetch < interval) {
			continue
		}
		req := kmsg.NewPtrBeginQuorumEpochRequest()
		req.Version = beginQuorumEpochVersion
		topic := kmsg.NewBeginQuorumEpochRequestTopic()
		topic.Topic = MetadataTopic
		part := kmsg.NewBeginQuorumEpochRequestTopicPartition()
		part.LeaderID = q.config.NodeID
		part.LeaderEpoch = q.epoch
		topic.Partitions = append(topic.Partitions, part)
		req.Topics = append(req.Topics, topic)
		q.peers.Request(id, req, q.config.RequestTimeout, func(resp kmsg.Response, err error) {
			if q.closed || q.generation != generation || err != nil {
				return
			}
			q.handleBeginQuorumEpochResponse(resp.(*kmsg.BeginQuorumEpochResponse))
		})
	}
	l.announceTimer = q.after(interval, q.announceLeadership)
}

// checkQuorumInterval is how often a leader checks that a majority still
// fetches from it.
func (q *Quorum) checkQuorumInterval() time.Duration { return q.config.FetchTimeout / 2 }

// checkQuorum resigns if fewer than a majority of voters (this one
// included) fetched within FetchTimeout: a leader cut off from the others
// stops accepting proposals it could never commit, and lets the others
// elect a leader without waiting for it.
func (q *Quorum) checkQuorum() {
	now := q.world.Clock.Elapsed()
	alive := 1
	for _, id := range q.leader.replicaIDs {
		if p := q.leader.replicas[id]; p.voter && now-p.lastFetch < q.config.FetchTimeout {
			alive++
		}
	}
	if alive < q.majority {
		q.logger.Info("resigning: no majority fetched", "epoch", q.epoch, "fetching", alive, "within", q.config.FetchTimeout)
		q.resign(nil)
		return
	}
	q.leader.checkQuorumTimer = q.after(q.checkQuorumInterval(), q.checkQuorum)
}

// Propose appends records to the metadata log as one batch in the leader's
// epoch, and calls done once they are committed and delivered to the
// CommitFunc here. It fails at once with ErrNotLeader on a node that is not
// a ready leader; a leader that loses leadership first fails the proposal
// with ErrNotLeader, although its records may still commit under the next
// leader (the outcome is unknown). done may run inside the call when the
// proposal is refused.
func (q *Quorum) Propose(records []metadata.Record, done func(lastOffset int64, err error)) {
	switch {
	case len(records) == 0:
		panic("quorum: empty proposal")
	case q.closed:
		done(-1, ErrClosed)
		return
	case !q.IsLeader():
		done(-1, ErrNotLeader)
		return
	case len(records) > recordsPerProposalMax:
		done(-1, fmt.Errorf("quorum: proposal of %d records exceeds %d", len(records), recordsPerProposalMax))
		return
	case len(q.leader.proposals) >= pendingProposalsMax:
		done(-1, ErrTooManyProposals)
		return
	}
	spec := batch.Spec{BaseTimestamp: q.world.Clock.Now().UnixMilli(), ProducerID: batch.NoProducerID}
	spec.Records, q.encoded = encodeRecords(records, q.encoded[:0])
	info, err := q.metadataLog.Append(batch.Build(spec), q.epoch)
	if err != nil {
		done(-1, fmt.Errorf("quorum: appending to the metadata log: %w", err))
		return
	}
	if n := len(q.leader.proposals); n > 0 && q.leader.proposals[n-1].lastOffset >= info.FirstOffset {
		panic(fmt.Sprintf("quorum: proposal at %d after one ending at %d", info.FirstOffset, q.leader.proposals[n-1].lastOffset))
	}
	q.leader.proposals = append(q.leader.proposals, proposal{lastOffset: info.LastOffset, done: done})
	q.metadataLog.Sync()
	q.answerHeldFetches() // followers waiting for data get it now
}

// encodeRecords encodes records as batch records whose values share one
// buffer, values (grown if need be, and returned to be used again). The
// values hold only until values is reused, which is long enough for
// batch.Build: it copies them into the batch.
func encodeRecords(records []metadata.Record, values []byte) ([]batch.Record, []byte) {
	encoded := make([]batch.Record, len(records))
	for i, r := range records {
		start := len(values)
		values = r.AppendEncode(values)
		// The right length; where it starts is set below, once values
		// has stopped moving as it grows.
		encoded[i].Value = values[start:]
	}
	start := 0
	for i := range encoded {
		end := start + len(encoded[i].Value)
		encoded[i].Value = values[start:end:end]
		start = end
	}
	return encoded, values
}

// completeProposals calls done for every proposal whose records have been
// delivered.
func (l *leaderState) completeProposals(appliedEnd int64) {
	for len(l.proposals) > 0 && l.proposals[0].lastOffset < appliedEnd {
		p := l.proposals[0]
		l.proposals = l.proposals[1:]
		p.done(p.lastOffset, nil)
	}
}

// failProposals fails every pending proposal.
func (l *leaderState) failProposals(err error) {
	proposals := l.proposals
	l.proposals = nil
	for _, p := range proposals {
		p.done(-1, err)
	}
}

// successors lists the other voters, most caught up first: the order a
// resigning leader suggests for the next election (KIP-595's
// PreferredSuccessors).
func (l *leaderState) successors() []int32 {
	var ids []int32
	for _, id := range l.replicaIDs {
		if l.replicas[id].voter {
			ids = append(ids, id)
		}
	}
	sort.SliceStable(ids, func(i, j int) bool { return l.replicas[ids[i]].syncedEnd > l.replicas[ids[j]].syncedEnd })
	return ids
}
