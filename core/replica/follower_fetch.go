package replica

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A follower's side of replication, as Kafka's ReplicaFetcherThread does it
// with Fetch v12 and later (KIP-279: divergence is found by the fetch
// itself). The node's fetcher asks the follower where to fetch from
// (FetchPosition), sends the Fetch to the leader, and hands the answer back
// (HandleFetchAnswer), which appends the records, truncates a divergent
// tail, or restarts the log at the leader's start.
//
// Durability: under the durable default a follower fetches from offset X
// only once everything below X is synced, because the leader counts X as
// held by this replica when it computes the high watermark. So after
// appending, the follower is not ready to fetch until its sync completes;
// the node sends the next fetch then (notifyFetchReady). In page-cache
// mode it fetches again at once, as Kafka's followers do. After a
// truncation the log refuses appends until the truncation is durable
// (core/log's ErrTruncationNotDurable), so the follower waits for that too.

// FetchPosition is what a follower asks its leader for next.
type FetchPosition struct {
	Leader             int32
	CurrentLeaderEpoch int32
	FetchOffset        int64
	LastFetchedEpoch   int32
	LogStartOffset     int64

	// generation is the following this position belongs to: an answer
	// for an older one is ignored.
	generation uint64
}

// FetchAnswer is the leader's answer for one partition of a follower's
// fetch. Error is a *kerr.Error or nil.
type FetchAnswer struct {
	Error              error
	Records            []byte
	HighWatermark      int64
	LogStartOffset     int64
	DivergingEpoch     int32
	DivergingEndOffset int64
}

// FetchPosition reports where this follower fetches from next, and false
// when it should not fetch now: it follows nobody, or waits for a sync
// (see above). OnFetchReady says when that changes.
func (p *Partition) FetchPosition() (position FetchPosition, ready bool) {
	if !p.readyToFetch() {
		return FetchPosition{}, false
	}
	// Set field by field on the result: a composite literal is built
	// aside and copied out, and the copy, reading in wide loads what was
	// just stored field by field, stalled (the node asks every followed
	// partition whenever it fetches).
	position.Leader = p.leader
	position.CurrentLeaderEpoch = p.leaderEpoch
	position.FetchOffset = p.log.EndOffset()
	position.LastFetchedEpoch = p.log.LatestEpoch()
	// Only a durable start: the leader answers a DeleteRecords once its
	// followers' starts have passed the offset, and a start a power loss
	// takes back would bring the records back.
	position.LogStartOffset = p.log.DurableStartOffset()
	position.generation = p.generation
	if p.w.Canaries.On(CanaryTruncateToHighWatermark) {
		// Before KIP-101 a follower sent no epoch: the leader cannot
		// see that the follower's log diverges from its own.
		position.LastFetchedEpoch = -1
	}
	return position, true
}

// readyToFetch reports whether a fetch may go out now.
func (p *Partition) readyToFetch() bool {
	if !p.IsFollower() || p.topicIDPending || p.durabilityWaits > 0 || p.held != nil {
		return false
	}
	return p.followerAcknowledgedOffset() >= p.log.EndOffset()
}

// followerAcknowledgedOffset is how far a follower may say it holds the
// log: its synced end under the durable default, its log end in page-cache
// mode (and under the canary that forgets to wait for the sync).
func (p *Partition) followerAcknowledgedOffset() int64 {
	if p.w.Canaries.On(CanaryAcksBeforeFollowerSync) {
		return p.log.EndOffset()
	}
	return p.acknowledgedOffset()
}

// OnFetchReady registers f to run when a follower that was not ready to
// fetch may be now (its sync completed, a truncation became durable, it
// started following a new leader). FetchPosition tells for sure.
func (p *Partition) OnFetchReady(f func()) {
	p.fetchReady = append(p.fetchReady, f)
}

func (p *Partition) notifyFetchReady() {
	if !p.readyToFetch() {
		return
	}
	for _, f := range p.fetchReady {
		f()
	}
}

// HandleFetchAnswer applies the leader's answer to a fetch made from
// position. It returns an error when the fetcher should back off before
// fetching this partition again (the leader refused: it is not the leader
// yet or any more, its epoch differs from this follower's, or the records
// could not be stored); nil when the next fetch may go out as soon as
// FetchPosition allows. An answer for an earlier position (another
// leader, another epoch, a log that has changed since) is ignored.
func (p *Partition) HandleFetchAnswer(position FetchPosition, answer FetchAnswer) error {
	if !p.IsFollower() || position.generation != p.generation || position.FetchOffset != p.log.EndOffset() {
		return nil
	}
	switch {
	case errors.Is(answer.Error, kerr.OffsetOutOfRange):
		return p.restartOutOfRange(position, answer)
	case answer.Error != nil:
		return answer.Error
	case answer.DivergingEpoch >= 0 || answer.DivergingEndOffset >= 0:
		return p.truncateDivergence(answer.DivergingEpoch, answer.DivergingEndOffset, answer.LogStartOffset)
	case p.uncheckableBelowLeaderStart(position, answer):
		return p.restartLogAt(answer.LogStartOffset, fmt.Sprintf(
			"its records above the high watermark %d, of epoch %d, lie below the leader's log start %d, where the leader of epoch %d cannot check them",
			p.highWatermark, p.log.LatestEpoch(), answer.LogStartOffset, p.leaderEpoch))
	}
	if len(answer.Records) > 0 {
		if err := p.appendAsFollower(answer.Records); err != nil {
			return err
		}
	}
	p.leaderHighWatermark = max(p.leaderHighWatermark, answer.HighWatermark)
	p.advanceFollowerHighWatermark()
	p.followLeaderStart(answer.LogStartOffset)
	return nil
}

// uncheckableBelowLeaderStart reports whether an answer without a
// divergence still leaves this follower's tail unchecked: the fetch was
// made at the leader's log start, so everything this log holds lies below
// it, and its records above the high watermark come from an epoch older
// than the leader's. The leader found no divergence only because its
// history stops at its log start: KIP-279 answers an epoch below every one
// the leader still has with that start as the epoch's end, which is the
// fetch offset itself. Such a tail may have been written by a leader cut
// off from the rest, never committed, at offsets that hold other records
// everywhere else (cluster seed 2005452). Taking the leader's high
// watermark over it would count it committed, and the producer state built
// from it would outlive it once the log start follows the leader's: leading
// later, this replica would answer a retry of such a batch as a duplicate,
// at an offset that holds another record. Records of the leader's own
// epoch need no check (only that leader wrote its epoch), nor do records
// below the high watermark (committed, so the leader's).
func (p *Partition) uncheckableBelowLeaderStart(position FetchPosition, answer FetchAnswer) bool {
	end := p.log.EndOffset()
	return answer.LogStartOffset >= position.FetchOffset &&
		p.highWatermark < end && p.log.StartOffset() < end &&
		p.log.LatestEpoch() < p.leaderEpoch
}

// followLeaderStart moves this follower's log start up to the leader's
// (after DeleteRecords or retention there), as far as its own high
// watermark: a follower never deletes what is not committed.
func (p *Partition) followLeaderStart(leaderStart int64) {
	target := min(leaderStart, p.highWatermark)
	if target <= p.log.StartOffset() {
		return
	}
	if err := p.log.AdvanceStartOffset(target); err != nil {
		p.logger.Warn("cannot follow the leader's log start", "start", target, "error", err)
		return
	}
	// Make the move durable now, not with the next append: the next
	// fetches report it once it is (FetchPosition).
	p.log.Sync()
	p.logger.Debug("log start follows the leader's", "start", target)
}
