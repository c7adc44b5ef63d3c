package quorum

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BeginQuorumEpoch (API key 53, KIP-595). A new leader tells every voter
// that it leads the epoch, so that they start fetching from it at once
// instead of waiting for their election timeout; it repeats this for
// voters that do not fetch (leader.go's announceLeadership). Sluice sends
// and answers v0 (v1 adds endpoints, KIP-853).

const beginQuorumEpochVersion = 0

// HandleBeginQuorumEpoch follows the announced leader, unless its epoch is
// older than this node's.
func (q *Quorum) HandleBeginQuorumEpoch(req *kmsg.BeginQuorumEpochRequest, done func(*kmsg.BeginQuorumEpochResponse)) {
	resp := req.ResponseKind().(*kmsg.BeginQuorumEpochResponse)
	if len(req.Topics) != 1 || req.Topics[0].Topic != MetadataTopic || len(req.Topics[0].Partitions) != 1 || req.Topics[0].Partitions[0].Partition != 0 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		done(resp)
		return
	}
	p := req.Topics[0].Partitions[0]
	answer := func(code int16) {
		topic := kmsg.NewBeginQuorumEpochResponseTopic()
		topic.Topic = MetadataTopic
		part := kmsg.NewBeginQuorumEpochResponseTopicPartition()
		part.ErrorCode = code
		part.LeaderID = q.knownLeader()
		part.LeaderEpoch = q.epoch
		topic.Partitions = append(topic.Partitions, part)
		resp.Topics = append(resp.Topics, topic)
		q.state.afterDurable(func() { done(resp) })
	}
	switch {
	case q.closed:
		resp.ErrorCode = kerr.BrokerNotAvailable.Code
		done(resp)
		return
	case p.LeaderEpoch > epochMax:
		resp.ErrorCode = kerr.InvalidRequest.Code
		done(resp)
		return
	case !q.isVoter || !q.isVoterID(p.LeaderID) || p.LeaderID == q.config.NodeID:
		answer(kerr.InconsistentVoterSet.Code)
		return
	case p.LeaderEpoch < q.epoch:
		answer(kerr.FencedLeaderEpoch.Code)
		return
	case q.contradictsLeader(p.LeaderEpoch, p.LeaderID):
		q.logger.Warn("refused a leader announcement: another node leads the epoch", "epoch", p.LeaderEpoch, "claimed", p.LeaderID, "known", q.knownLeader())
		answer(kerr.InvalidRequest.Code)
		return
	}
	if q.role != roleFollower || q.epoch != p.LeaderEpoch || q.leaderID != p.LeaderID {
		q.becomeFollower(p.LeaderEpoch, p.LeaderID)
	}
	q.heardFromLeader()
	answer(0)
}

// handleBeginQuorumEpochResponse steps down if the voter knows a newer
// epoch.
func (q *Quorum) handleBeginQuorumEpochResponse(resp *kmsg.BeginQuorumEpochResponse) {
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return
	}
	p := resp.Topics[0].Partitions[0]
	if p.LeaderEpoch > q.epoch {
		q.learnLeader(p.LeaderID, p.LeaderEpoch)
	}
}
