package quorum

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	corelog "sluice/core/log"
)

// The follower's side of Fetch: one request in flight at a time, sent only
// once the log is synced to its end, so that the fetch offset the leader
// counts toward the high watermark is durable here.

// fetcherState is what a fetching node (a follower, or an observer looking
// for the leader) keeps.
type fetcherState struct {
	inFlight bool
	// awaitingSync: the next fetch waits for the log's sync.
	awaitingSync bool
	// retryPending: a retry timer is armed.
	retryPending bool
	// contacted is set once the leader answered in this role;
	// lastContact is when (Elapsed).
	contacted   bool
	lastContact time.Duration
	// timer is the fetch timeout: no word from the leader for
	// FetchTimeout ends the role. retryTimer is a pending retry.
	timer, retryTimer core.Timer
	// discoveryNext picks the voter an observer asks next.
	discoveryNext int
	// download is the snapshot being fetched, nil if none.
	download *snapshotDownload
	// target is the node the fetch in flight went to.
	target int32
	// The role's callbacks, made once by newFetcherState (see
	// inThisRole): the fetch timeout, the answer to a fetch, and the
	// retry after a failed one. A follower arms the first and gets the
	// second for every answer from the leader.
	onTimeout func()
	onAnswer  func(kmsg.Response, error)
	onRetry   func()
	// request is the fetch sent last. The peer client keeps a request
	// until its answer or failure reaches onAnswer, and encodes it when
	// sent; one fetch is in flight at a time, so each fetch is written
	// over the last one rather than allocated, and each answer decoded
	// into the same value, set back to new for each
	// (peer.Client.RequestInto): onAnswer is done with it when it
	// returns.
	request metadataFetchRequest
	answer  kmsg.FetchResponse
}

// newFetcherState is the state of a node that starts fetching in the role
// it has just taken.
func (q *Quorum) newFetcherState() *fetcherState {
	f := &fetcherState{}
	f.onTimeout = q.inThisRole(q.electionTimeout)
	generation := q.generation
	f.onAnswer = func(resp kmsg.Response, err error) {
		if q.closed || q.generation != generation {
			return
		}
		f.inFlight = false
		if err != nil {
			q.retryFetch()
			return
		}
		q.handleFetchResponse(f.target, resp.(*kmsg.FetchResponse))
	}
	f.onRetry = q.inThisRole(func() {
		f.retryPending = false
		q.maybeFetch()
	})
	return f
}

// heardWithin reports whether the leader answered within d of now.
func (f *fetcherState) heardWithin(now, d time.Duration) bool {
	return f.contacted && now-f.lastContact < d
}

// heardFromLeader notes an answer from the leader and restarts the fetch
// timeout.
func (q *Quorum) heardFromLeader() {
	f := q.fetcher
	f.contacted, f.lastContact = true, q.world.Clock.Elapsed()
	q.resetFetchTimer()
}

func (q *Quorum) resetFetchTimer() {
	f := q.fetcher
	if f.timer != nil {
		f.timer.Stop()
	}
	f.timer = q.world.Clock.AfterFunc(q.config.FetchTimeout, f.onTimeout)
}

// maybeFetch sends the next fetch if nothing stands in the way.
func (q *Quorum) maybeFetch() {
	f := q.fetcher
	switch {
	case q.closed || f == nil || f.inFlight || f.retryPending || f.download != nil || q.logReset != nil:
		return
	case q.role != roleFollower && !(q.role == roleUnattached && !q.isVoter):
		return
	}
	if q.metadataLog.SyncedOffset() < q.metadataLog.EndOffset() {
		f.awaitingSync = true
		q.metadataLog.Sync()
		return
	}
	f.awaitingSync = false
	target := q.leaderID
	if q.role == roleUnattached {
		// An observer without a leader asks the voters in turn; any
		// of them answers with the leader it knows.
		target = q.voters[f.discoveryNext%len(q.voters)]
		f.discoveryNext++
	}
	req := q.writeFetchRequest(&f.request)
	f.inFlight = true
	f.target = target // one fetch is in flight at a time
	f.answer = kmsg.NewFetchResponse()
	q.peers.RequestInto(target, req, &f.answer, q.config.RequestTimeout+q.config.fetchWait(), f.onAnswer)
}

// retryFetch fetches again after retryBackoff.
func (q *Quorum) retryFetch() {
	f := q.fetcher
	if f.retryPending {
		return
	}
	f.retryPending = true
	f.retryTimer = q.world.Clock.AfterFunc(retryBackoff, f.onRetry)
}

// metadataFetchRequest is a fetch of the metadata partition with its one
// topic and partition, allocated together: a follower sends one for every
// answer it gets, and building it by appends cost three allocations.
type metadataFetchRequest struct {
	request   kmsg.FetchRequest
	topic     [1]kmsg.FetchRequestTopic
	partition [1]kmsg.FetchRequestTopicPartition
}

// fetchRequest asks the leader for the records after this log's end.
func (q *Quorum) fetchRequest() *kmsg.FetchRequest {
	return q.writeFetchRequest(&metadataFetchRequest{})
}

// writeFetchRequest writes the fetch fetchRequest makes in m.
func (q *Quorum) writeFetchRequest(m *metadataFetchRequest) *kmsg.FetchRequest {
	*m = metadataFetchRequest{}
	req := &m.request
	req.Default()
	req.Version = fetchVersion
	req.ReplicaID = q.config.NodeID
	req.ReplicaState.ID = q.config.NodeID
	req.MaxWaitMillis = int32(q.config.fetchWait() / time.Millisecond)
	req.MinBytes = 1
	req.MaxBytes = fetchBytesMax
	topic := &m.topic[0]
	topic.Default()
	topic.Topic = MetadataTopic
	topic.TopicID = MetadataTopicID
	p := &m.partition[0]
	p.Default()
	p.CurrentLeaderEpoch = q.epoch
	p.FetchOffset = q.metadataLog.EndOffset()
	p.LastFetchedEpoch = q.lastEpoch()
	p.LogStartOffset = q.metadataLog.StartOffset()
	p.PartitionMaxBytes = fetchBytesMax
	p.HighWatermark = q.highWatermark // KIP-1166: answer early once it moves
	topic.Partitions = m.partition[:]
	req.Topics = m.topic[:]
	return req
}

// handleFetchResponse acts on the leader's answer: follow a leader it
// names, truncate where the logs diverge, download a snapshot, or append
// the records and learn the high watermark.
func (q *Quorum) handleFetchResponse(target int32, resp *kmsg.FetchResponse) {
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		q.retryFetch()
		return
	}
	p := &resp.Topics[0].Partitions[0]
	if q.learnLeader(p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch) {
		return // a new role fetches anew
	}
	if p.ErrorCode != 0 || q.role != roleFollower || target != q.leaderID {
		q.retryFetch()
		return
	}
	q.heardFromLeader()
	switch {
	case p.DivergingEpoch.EndOffset >= 0 || p.DivergingEpoch.Epoch >= 0:
		if q.truncateToDivergence(p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset) {
			q.maybeFetch()
		} else {
			q.retryFetch()
		}
	case p.SnapshotID.EndOffset >= 0:
		q.startSnapshotDownload(snapshotID{endOffset: p.SnapshotID.EndOffset, epoch: p.SnapshotID.Epoch})
	default:
		q.appendFetched(p)
	}
}

// appendFetched appends the records the leader sent, learns its high
// watermark, and delivers what is committed and synced here.
func (q *Quorum) appendFetched(p *kmsg.FetchResponseTopicPartition) {
	if len(p.RecordBatches) > 0 {
		if _, err := q.metadataLog.AppendReplicated(p.RecordBatches); err != nil {
			if !errors.Is(err, corelog.ErrTruncationNotDurable) && !errors.Is(err, core.ErrDiskFull) {
				q.logger.Warn("fetched metadata not appended", "offset", q.metadataLog.EndOffset(), "error", err)
			}
			q.retryFetch()
			return
		}
		q.metadataLog.Sync()
	}
	// Below this log's end, it equals the leader's: the leader checked
	// the fetch offset, and the rest came from it.
	if hw := min(p.HighWatermark, q.metadataLog.EndOffset()); hw > q.highWatermark {
		q.setHighWatermark(hw)
	}
	q.maybeApply()
	if p.HighWatermark >= 0 {
		// -1: the leader has not yet committed in its epoch, so it does
		// not know the commit point (see advertisedHighWatermark).
		q.learnedHighWatermark(p.HighWatermark)
	}
	q.maybeFetch()
}

// truncateToDivergence cuts the log where the leader says it diverges, as
// KRaft's truncateToEndOffset does: at the smaller of the leader's end for
// the epoch and this log's own end for it, or at this log's end for the
// largest epoch it has below the leader's. Committed records are never
// cut: the leader has them all (Raft's leader completeness). It reports
// whether the log was cut.
func (q *Quorum) truncateToDivergence(epoch int32, endOffset int64) bool {
	localEpoch, localEnd := q.metadataLog.EndOffsetForEpoch(epoch)
	target := localEnd
	if localEpoch == epoch {
		target = min(localEnd, endOffset)
	}
	if epoch < 0 || endOffset < 0 || localEnd < 0 {
		// The leader knows nothing of this log's epochs: keep what is
		// committed and fetch the rest again.
		target = q.highWatermark
	}
	if target < q.highWatermark {
		panic(q.describeLog("truncation to " + itoa(target) + " would cut committed records"))
	}
	end := q.metadataLog.EndOffset()
	if target >= end {
		q.logger.Warn("the leader reports a divergence past this log's end", "end", end, "leader_epoch", epoch, "leader_end", endOffset)
		return false
	}
	if err := q.metadataLog.TruncateTo(target); err != nil {
		q.logger.Warn("truncation failed", "offset", target, "error", err)
		return false
	}
	if q.metadataLog.EndOffset() < q.highWatermark {
		panic(q.describeLog("truncation cut below the high watermark"))
	}
	q.logger.Info("truncated diverging log", "from", end, "to", q.metadataLog.EndOffset(), "leader_epoch", epoch, "leader_end", endOffset)
	return true
}
