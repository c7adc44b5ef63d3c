package quorum

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	corelog "sluice/core/log"
	"sluice/core/wire"
)

// Fetch (API key 1) of the metadata partition, the leader's side (KIP-595).
// Replication is by pull: followers and observers fetch from their fetch
// offset, which is their log's end and, for followers, synced; the leader
// checks that offset against its own log with the follower's
// LastFetchedEpoch and answers either records, a DivergingEpoch (truncate to
// here and fetch again), or a SnapshotId (the offset is below the log start:
// download the snapshot). A follower's valid fetch offset is also its
// acknowledgement, from which the leader computes the high watermark.
// Answers carry the high watermark, so followers learn what is committed.
// A fetch that finds nothing new is held up to MaxWaitMillis (capped),
// and answered early when records arrive or the high watermark moves past
// the one the follower says it knows (KIP-1166).
//
// Sluice sends v17 (topic by id) and answers any version.

const fetchVersion = 17

// highWatermarkNotSent is the Fetch request's HighWatermark when the
// fetcher does not send it (KIP-1166's "not supported").
const highWatermarkNotSent = 1<<63 - 1

// notLeaderCode answers a fetch sent to a node that does not lead.
var notLeaderCode = kerr.NotLeaderForPartition.Code

// heldFetch is a follower's Fetch the leader holds for new data. It lives
// in the follower's replicaProgress (heldSlot), which holds one at a time.
type heldFetch struct {
	request *kmsg.FetchRequest
	offset  int64
	done    wire.Responder
	timer   core.Timer
}

// fetchPosition is the leader's verdict on a fetch offset.
type fetchPosition struct {
	valid     bool
	diverging *kmsg.FetchResponseTopicPartitionDivergingEpoch
	snapshot  *snapshotID
}

// HandleFetch answers a Fetch of the metadata partition from a follower or
// an observer. It may hold the request for up to MaxWaitMillis. done must
// be finished with the answer when it returns (the broker encodes it at
// once): the next answer is built in the same memory.
func (q *Quorum) HandleFetch(req *kmsg.FetchRequest, done wire.Responder) {
	p, ok := metadataFetchPartition(req)
	if !ok {
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		resp.ErrorCode = kerr.InvalidRequest.Code
		done.Respond(resp)
		return
	}
	replica := fetchReplicaID(req)
	switch {
	case q.closed || !q.IsLeader():
		q.answerFetchError(req, done, notLeaderCode)
		return
	case p.CurrentLeaderEpoch < q.epoch:
		q.answerFetchError(req, done, kerr.FencedLeaderEpoch.Code)
		return
	case p.CurrentLeaderEpoch > q.epoch:
		q.answerFetchError(req, done, kerr.UnknownLeaderEpoch.Code)
		return
	case replica < 0 || replica == q.config.NodeID:
		q.answerFetchError(req, done, kerr.InvalidRequest.Code)
		return
	case p.FetchOffset < 0 || p.LastFetchedEpoch > p.CurrentLeaderEpoch:
		// No follower's position, as KRaft refuses it too: below the
		// log start of an empty log, checkFetchPosition would send it
		// to a snapshot there is none of.
		q.answerFetchError(req, done, kerr.InvalidRequest.Code)
		return
	}
	l := q.leader
	progress, known := l.replicas[replica]
	if !known {
		if q.isVoterID(replica) || len(l.replicas) >= len(q.voters)-1+observersTrackedMax {
			q.answerFetchError(req, done, kerr.InvalidRequest.Code)
			return
		}
		progress = l.addReplica(replica, false, q.world.Clock.Elapsed())
	}
	if held := progress.held; held != nil {
		// A newer fetch supersedes a held one (the follower gave up on
		// it and reconnected): answer the old one first.
		progress.held = nil
		held.timer.Stop()
		q.answerFetch(progress, held.request, held.offset, held.done)
	}

	position := q.checkFetchPosition(p.FetchOffset, p.LastFetchedEpoch)
	if !position.valid {
		q.logger.Debug("fetch position rejected", "replica", replica, "offset", p.FetchOffset, "last_epoch", p.LastFetchedEpoch, "diverging", position.diverging, "snapshot", position.snapshot)
		resp, part := q.fetchAnswer(req)
		if position.diverging != nil {
			part.DivergingEpoch = *position.diverging
		} else {
			part.SnapshotID.EndOffset = position.snapshot.endOffset
			part.SnapshotID.Epoch = position.snapshot.epoch
		}
		progress.lastFetch = q.world.Clock.Elapsed() // it is alive
		progress.fetched = true
		done.Respond(resp)
		return
	}
	q.recordFetch(progress, p.FetchOffset)
	if q.role != roleLeader {
		// Recording it committed records whose delivery ended the
		// leadership (a CommitFunc resigned): answer as a non-leader.
		q.answerFetchError(req, done, notLeaderCode)
		return
	}
	wait := min(time.Duration(req.MaxWaitMillis)*time.Millisecond, q.config.fetchWait())
	// The follower says what high watermark it knows (KIP-1166); without
	// that, what the last answer told it.
	followerHighWatermark := p.HighWatermark
	if followerHighWatermark == highWatermarkNotSent {
		followerHighWatermark = progress.sentHighWatermark
	}
	if p.FetchOffset < q.metadataLog.EndOffset() || q.advertisedHighWatermark() > followerHighWatermark || wait <= 0 {
		q.answerFetch(progress, req, p.FetchOffset, done)
		return
	}
	// Most fetches are held and answered empty (idle long polls): the
	// held fetch goes in the replica's slot and its expiry is made once
	// per replica and leadership, so holding one allocates nothing here.
	if progress.expireHeld == nil {
		replica := progress // captured by value: progress is assigned twice
		progress.expireHeld = q.inThisRole(func() { q.expireHeldFetch(replica) })
	}
	progress.heldSlot = heldFetch{request: req, offset: p.FetchOffset, done: done}
	progress.held = &progress.heldSlot
	progress.held.timer = q.world.Clock.AfterFunc(wait, progress.expireHeld)
}

// expireHeldFetch answers p's held fetch when its wait is over. Whatever
// takes a held fetch out of its slot first (an answer, a newer fetch, the
// end of the leadership) stops its timer, so a timer that fires finds its
// own fetch still held.
func (q *Quorum) expireHeldFetch(p *replicaProgress) {
	if h := p.held; h != nil {
		p.held = nil
		q.answerFetch(p, h.request, h.offset, h.done)
	}
}

// recordFetch takes a valid fetch offset as the replica's acknowledgement:
// everything below it is durable in its log and equal to the leader's.
func (q *Quorum) recordFetch(p *replicaProgress, offset int64) {
	now, wall := q.world.Clock.Elapsed(), q.world.Clock.Now().UnixMilli()
	p.fetched, p.lastFetch, p.lastFetchMillis = true, now, wall
	if offset >= q.metadataLog.EndOffset() {
		p.lastCaughtUpMillis = wall
	}
	if offset > p.syncedEnd || !p.voter {
		p.syncedEnd = offset
	}
	if p.voter {
		q.maybeCommit()
	}
}

// checkFetchPosition checks a follower's fetch offset and the epoch of the
// batch before it against this leader's log, as KRaft's
// validateOffsetAndEpoch does:
//   - below the log start, or at the start with a different epoch than the
//     snapshot there, or an epoch older than that snapshot's: the follower
//     must download the snapshot;
//   - an epoch the leader's log ends earlier than the offset, or does not
//     have at all: the logs diverge, and the answer says where this log's
//     largest epoch at or below the follower's ends;
//   - otherwise the follower's log matches this one below the offset (Raft
//     §5.3's log matching property: same epoch at the same offset, same
//     history before).
func (q *Quorum) checkFetchPosition(offset int64, lastEpoch int32) fetchPosition {
	start, end := q.metadataLog.StartOffset(), q.metadataLog.EndOffset()
	startSnapshot, haveStartSnapshot := q.snapshotEndingAt(start)
	needSnapshot := offset < start ||
		(offset == start && start > 0 && (!haveStartSnapshot || lastEpoch != startSnapshot.epoch)) ||
		(haveStartSnapshot && lastEpoch < startSnapshot.epoch)
	switch {
	case needSnapshot:
		latest, ok := q.latestSnapshot()
		if !ok {
			panic(q.describeLog("a fetch needs a snapshot but there is none"))
		}
		return fetchPosition{snapshot: &latest}
	case offset == start:
		return fetchPosition{valid: true}
	case q.world.Canaries.On(CanaryAppendWithoutEpochCheck) && offset <= end:
		// The planted bug: serve from any offset the log has.
		return fetchPosition{valid: true}
	}
	epoch, epochEnd := q.metadataLog.EndOffsetForEpoch(lastEpoch)
	if epoch != lastEpoch || epochEnd < offset {
		return fetchPosition{diverging: &kmsg.FetchResponseTopicPartitionDivergingEpoch{Epoch: epoch, EndOffset: epochEnd}}
	}
	return fetchPosition{valid: true}
}

// answerFetch answers a valid fetch of req from offset with the records
// from there, the high watermark and the log start.
func (q *Quorum) answerFetch(p *replicaProgress, req *kmsg.FetchRequest, offset int64, done wire.Responder) {
	resp, part := q.fetchAnswer(req)
	records, err := q.metadataLog.Read(offset, q.metadataLog.EndOffset(), q.fetchBytes(req), true)
	switch {
	case errors.Is(err, corelog.ErrOffsetOutOfRange):
		part.ErrorCode = kerr.OffsetOutOfRange.Code
	case err != nil:
		q.logger.Warn("metadata fetch failed", "replica", p.id, "offset", offset, "error", err)
		part.ErrorCode = kerr.KafkaStorageError.Code
	default:
		part.RecordBatches = records
		p.sentHighWatermark = q.advertisedHighWatermark()
	}
	done.Respond(resp)
}

// fetchBytes bounds one answer by the request's limits and fetchBytesMax.
func (q *Quorum) fetchBytes(req *kmsg.FetchRequest) int {
	limit := int32(fetchBytesMax)
	if req.MaxBytes > 0 {
		limit = min(limit, req.MaxBytes)
	}
	if p, ok := metadataFetchPartition(req); ok && p.PartitionMaxBytes > 0 {
		limit = min(limit, p.PartitionMaxBytes)
	}
	return int(limit)
}

// advertisedHighWatermark is the high watermark this node tells fetchers:
// -1 (unknown) from a leader that has not yet committed a batch of its own
// epoch. Until then its high watermark is whatever it last knew as a
// follower, or its snapshot's end after a restart, and records past it may
// have been committed in earlier epochs: Raft's leader learns the commit
// point only by committing an entry of its own term (§5.4.2), and KRaft's
// leader reports no high watermark before that either. A follower that took
// the stale value as the point to catch up to would act on an old image.
func (q *Quorum) advertisedHighWatermark() int64 {
	if l := q.leader; l != nil && (l.epochStartOffset < 0 || q.highWatermark <= l.epochStartOffset) {
		return -1
	}
	return q.highWatermark
}

// metadataFetchAnswer is an answer for the metadata partition with its one
// topic and partition, together (as metadataFetchRequest is), in the
// Quorum's fetchAnswerRoom.
type metadataFetchAnswer struct {
	response  kmsg.FetchResponse
	topic     [1]kmsg.FetchResponseTopic
	partition [1]kmsg.FetchResponseTopicPartition
}

// fetchAnswer builds an answer to req for the metadata partition, with the
// leader, the high watermark and the log start filled in.
func (q *Quorum) fetchAnswer(req *kmsg.FetchRequest) (*kmsg.FetchResponse, *kmsg.FetchResponseTopicPartition) {
	m := &q.fetchAnswerRoom
	*m = metadataFetchAnswer{}
	resp := &m.response // as req.ResponseKind() makes it
	resp.Default()
	resp.Version = req.Version
	topic := &m.topic[0]
	topic.Default()
	topic.Topic = MetadataTopic
	topic.TopicID = MetadataTopicID
	part := &m.partition[0]
	part.Default()
	part.HighWatermark = q.advertisedHighWatermark()
	part.LastStableOffset = part.HighWatermark
	part.LogStartOffset = q.metadataLog.StartOffset()
	part.CurrentLeader.LeaderID = q.knownLeader()
	part.CurrentLeader.LeaderEpoch = q.epoch
	topic.Partitions = m.partition[:]
	resp.Topics = m.topic[:]
	return resp, part
}

// answerFetchError answers a fetch with an error and the leader this node
// knows, which is how a follower or observer finds the current leader.
func (q *Quorum) answerFetchError(req *kmsg.FetchRequest, done wire.Responder, code int16) {
	resp, part := q.fetchAnswer(req)
	part.ErrorCode = code
	part.HighWatermark = -1
	part.LastStableOffset = -1
	done.Respond(resp)
}

// answerHeldFetches answers every held fetch now: records were appended or
// the high watermark moved.
func (q *Quorum) answerHeldFetches() {
	l := q.leader
	for _, id := range l.replicaIDs {
		p := l.replicas[id]
		if h := p.held; h != nil {
			p.held = nil
			h.timer.Stop()
			q.answerFetch(p, h.request, h.offset, h.done)
		}
	}
}

// takeHeldFetches detaches every held fetch, for a leader that stops
// leading to answer as a non-leader.
func (l *leaderState) takeHeldFetches() []*heldFetch {
	var held []*heldFetch
	for _, id := range l.replicaIDs {
		p := l.replicas[id]
		if h := p.held; h != nil {
			p.held = nil
			h.timer.Stop()
			held = append(held, h)
		}
	}
	return held
}
