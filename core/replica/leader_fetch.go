package replica

import (
	"github.com/twmb/franz-go/pkg/kerr"
)

// FollowerFetch is one partition of a follower's Fetch request.
type FollowerFetch struct {
	// ReplicaID is the follower's broker id and BrokerEpoch the epoch of
	// its registration (Fetch v15 ReplicaState, KIP-903), -1 if it has
	// none yet.
	ReplicaID   int32
	BrokerEpoch int64
	// CurrentLeaderEpoch is the leader epoch the follower follows.
	CurrentLeaderEpoch int32
	// FetchOffset is the follower's log end: under the durable default,
	// everything below it is synced there.
	FetchOffset int64
	// LastFetchedEpoch is the epoch of the follower's last batch (-1 if
	// its log is empty): the leader checks the follower's log against
	// its own with it (KIP-279).
	LastFetchedEpoch int32
	// LogStartOffset is the follower's log start (Fetch v5+).
	LogStartOffset int64
	// MaxBytes bounds the records read, except that with AtLeastOne the
	// first batch is read whatever its size (KIP-74), as for the first
	// partition of an answer.
	MaxBytes   int
	AtLeastOne bool
}

// FollowerFetchResult is the leader's answer to one FollowerFetch.
type FollowerFetchResult struct {
	// Records are whole batches from FetchOffset up to the log end, not
	// the high watermark: followers take what is not committed yet.
	Records        []byte
	HighWatermark  int64
	LogStartOffset int64
	// DivergingEpoch and DivergingEndOffset, when not -1, say the
	// follower's log diverges from the leader's: the leader's last epoch
	// at or below LastFetchedEpoch and where it ends. No records come
	// with them; the follower truncates and fetches again.
	DivergingEpoch     int32
	DivergingEndOffset int64
}

// ServeFollowerFetch answers a follower's fetch, as Kafka's
// Partition.fetchRecords does for a replica:
//
//  1. Fencing: the follower's CurrentLeaderEpoch must be this leader's
//     (FENCED_LEADER_EPOCH if older, UNKNOWN_LEADER_EPOCH if newer), this
//     replica must lead, and the follower must be a replica
//     (NOT_LEADER_OR_FOLLOWER). A fetch carrying an older broker epoch
//     than the follower's registration comes from a process that has
//     since restarted: NOT_LEADER_OR_FOLLOWER, and nothing is recorded.
//  2. Divergence (KIP-279): the leader looks up LastFetchedEpoch in its
//     own epochs; if its log has a smaller epoch there, or that epoch
//     ends before FetchOffset, the follower's log diverges and the answer
//     says where the leader's ends (DivergingEpoch), with no records and
//     nothing recorded.
//  3. Otherwise the fetch offset is recorded as the follower's log end:
//     the follower may be caught up, may join the ISR, and the high
//     watermark may move. The answer carries records from FetchOffset up
//     to the log end, within MaxBytes, with the (new) high watermark.
//
// A FetchOffset below the log start or above the log end is
// OFFSET_OUT_OF_RANGE; the answer still carries the log start and high
// watermark, from which the follower restarts (follower_fetch.go).
func (p *Partition) ServeFollowerFetch(fetch FollowerFetch) (result FollowerFetchResult, err error) {
	// Set field by field on the result: a composite literal, built aside
	// and copied out at the return, stalled there (see FetchPosition).
	result.HighWatermark, result.LogStartOffset = p.highWatermark, p.log.StartOffset()
	result.DivergingEpoch, result.DivergingEndOffset = -1, -1
	if err := p.checkLeaderEpoch(fetch.CurrentLeaderEpoch); err != nil {
		return result, err
	}
	if !p.IsLeader() {
		return result, kerr.NotLeaderForPartition
	}
	f := p.follower(fetch.ReplicaID)
	if f == nil {
		return result, kerr.NotLeaderForPartition
	}
	if p.staleBrokerEpoch(f, fetch.BrokerEpoch) {
		p.logger.Debug("fetch from a restarted follower's old process", "follower", f.id, "broker_epoch", fetch.BrokerEpoch)
		return result, kerr.NotLeaderForPartition
	}
	tookOver := fetch.CurrentLeaderEpoch == p.leaderEpoch && p.formerLeaderFetched(f.id)
	// The follower's start as it is now: it may have gone down, after a
	// restart that lost a move its disk had not synced.
	moved := fetch.LogStartOffset > f.logStartOffset
	f.logStartOffset = fetch.LogStartOffset
	if moved || tookOver {
		p.completeDeletes()
	}
	start, leaderEnd := p.log.StartOffset(), p.log.EndOffset()
	if fetch.LastFetchedEpoch >= 0 {
		epoch, end := p.endOffsetForEpoch(fetch.LastFetchedEpoch)
		switch {
		case epoch < 0 || end < 0, fetch.FetchOffset < start:
			return result, kerr.OffsetOutOfRange
		case epoch < fetch.LastFetchedEpoch || end < fetch.FetchOffset:
			result.DivergingEpoch, result.DivergingEndOffset = epoch, end
			return result, nil
		}
	}
	if fetch.FetchOffset < start || fetch.FetchOffset > leaderEnd {
		return result, kerr.OffsetOutOfRange
	}
	p.recordFetch(f, fetch.FetchOffset, leaderEnd, fetch.BrokerEpoch)
	p.maybeExpandISR(f)
	p.updateHighWatermark()
	records, err := p.log.Read(fetch.FetchOffset, leaderEnd, fetch.MaxBytes, fetch.AtLeastOne)
	result.HighWatermark = p.highWatermark
	if err != nil {
		p.logger.Warn("read for a follower failed", "follower", f.id, "offset", fetch.FetchOffset, "error", err)
		return result, kafkaError(err)
	}
	result.Records = records
	return result, nil
}

// staleBrokerEpoch reports whether a fetch carries an older broker epoch
// than the follower is known by: from its own earlier fetches, or from
// its registration in the metadata.
func (p *Partition) staleBrokerEpoch(f *followerState, brokerEpoch int64) bool {
	if brokerEpoch < 0 {
		return false
	}
	if brokerEpoch < f.brokerEpoch {
		return true
	}
	if p.replication != nil {
		if registered, _ := p.replication.Broker(f.id); registered > brokerEpoch {
			return true
		}
	}
	return false
}

// OnLeaderAppend registers f to run after each append as leader: followers'
// fetches long-poll for new records, not only for the high watermark.
func (p *Partition) OnLeaderAppend(f func()) {
	p.leaderAppended = append(p.leaderAppended, f)
}

// endOffsetForEpoch is the leader's answer to "where does epoch end in
// your log" (OffsetForLeaderEpoch, and the divergence check of a follower
// fetch): the largest epoch at or below requested that wrote to the log
// and the offset where it ended.
//
// Kafka writes a new leader's epoch into its epoch cache, at the log end,
// the moment it becomes leader; Sluice's log records an epoch with its
// first batch. Until the leader has appended, the answer adds that entry,
// so that a follower holding batches of an epoch between the last one in
// this log and the current one learns that this log ends there.
func (p *Partition) endOffsetForEpoch(requested int32) (int32, int64) {
	latest := p.log.LatestEpoch()
	if requested < 0 || latest >= p.leaderEpoch {
		return p.log.EndOffsetForEpoch(requested)
	}
	end := p.log.EndOffset()
	switch {
	case requested > p.leaderEpoch:
		return -1, -1
	case requested == p.leaderEpoch, latest < 0:
		return requested, end
	case requested >= latest:
		return latest, end
	}
	return p.log.EndOffsetForEpoch(requested)
}
