package quorum

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
)

// EndQuorumEpoch (API key 54, KIP-595). A leader that steps down (a
// graceful shutdown through Resign, or check-quorum) tells the voters, with
// its preferred successors, most caught up first; a voter that followed it
// stops waiting for its fetch timeout, and the first successor campaigns
// almost at once, the others a little later each. Sluice sends and answers
// v0 (v1 adds endpoints, KIP-853).

const endQuorumEpochVersion = 0

// Resign steps down gracefully before a shutdown: a leader stops accepting
// proposals (pending ones fail with ErrNotLeader), tells the other voters
// with EndQuorumEpoch, and calls done once they answered or RequestTimeout
// passed. From then on this node never campaigns again; call Close next. A
// node that is not the leader only stops campaigning.
func (q *Quorum) Resign(done func()) {
	q.retiring = true
	if q.closed || q.role != roleLeader {
		q.world.Clock.AfterFunc(0, done)
		return
	}
	pending := len(q.voters) - 1
	if pending == 0 {
		q.resign(nil)
		q.world.Clock.AfterFunc(0, done)
		return
	}
	q.resign(func() {
		pending--
		if pending == 0 {
			done()
		}
	})
}

// resign steps down from leading this epoch and tells the other voters;
// answered, if not nil, is called once per voter when its answer (or
// failure) arrives.
func (q *Quorum) resign(answered func()) {
	epoch := q.epoch
	successors := q.leader.successors()
	q.becomeUnattached(epoch, q.randomElectionTimeout())
	for _, id := range q.voters {
		if id == q.config.NodeID {
			continue
		}
		req := kmsg.NewPtrEndQuorumEpochRequest()
		req.Version = endQuorumEpochVersion
		topic := kmsg.NewEndQuorumEpochRequestTopic()
		topic.Topic = MetadataTopic
		part := kmsg.NewEndQuorumEpochRequestTopicPartition()
		part.LeaderID = q.config.NodeID
		part.LeaderEpoch = epoch
		part.PreferredSuccessors = successors
		topic.Partitions = append(topic.Partitions, part)
		req.Topics = append(req.Topics, topic)
		q.peers.Request(id, req, q.config.RequestTimeout, func(resp kmsg.Response, err error) {
			if !q.closed && err == nil {
				if r := resp.(*kmsg.EndQuorumEpochResponse); len(r.Topics) == 1 && len(r.Topics[0].Partitions) == 1 {
					p := r.Topics[0].Partitions[0]
					if p.LeaderEpoch > q.epoch {
						q.learnLeader(p.LeaderID, p.LeaderEpoch)
					}
				}
			}
			if answered != nil {
				answered()
			}
		})
	}
}

// HandleEndQuorumEpoch forgets a leader that resigned, and schedules this
// node's election by its place among the preferred successors.
func (q *Quorum) HandleEndQuorumEpoch(req *kmsg.EndQuorumEpochRequest, done func(*kmsg.EndQuorumEpochResponse)) {
	resp := req.ResponseKind().(*kmsg.EndQuorumEpochResponse)
	if len(req.Topics) != 1 || req.Topics[0].Topic != MetadataTopic || len(req.Topics[0].Partitions) != 1 || req.Topics[0].Partitions[0].Partition != 0 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		done(resp)
		return
	}
	p := req.Topics[0].Partitions[0]
	answer := func(code int16) {
		topic := kmsg.NewEndQuorumEpochResponseTopic()
		topic.Topic = MetadataTopic
		part := kmsg.NewEndQuorumEpochResponseTopicPartition()
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
	case !q.isVoter || !q.isVoterID(p.LeaderID):
		answer(kerr.InconsistentVoterSet.Code)
		return
	case p.LeaderEpoch < q.epoch:
		answer(kerr.FencedLeaderEpoch.Code)
		return
	}
	followedIt := q.role == roleFollower && q.epoch == p.LeaderEpoch && q.leaderID == p.LeaderID
	if p.LeaderEpoch > q.epoch || followedIt {
		q.becomeUnattached(p.LeaderEpoch, q.successorDelay(p.PreferredSuccessors))
	}
	answer(0)
}

// successorDelay is how long this voter waits before campaigning after its
// leader resigned: almost nothing for the first preferred successor, a
// share of the election timeout more for each place further down.
func (q *Quorum) successorDelay(successors []int32) time.Duration {
	position := len(successors)
	for i, id := range successors {
		if id == q.config.NodeID {
			position = i
			break
		}
	}
	t := q.config.ElectionTimeout
	if q.world.Buggify.Hit(core.BuggifyQuorumSuccessorNoDelay) {
		// BUGGIFY: every successor campaigns at once, the preferred
		// order ignored: the votes must still settle on one leader.
		return 0
	}
	step := t / time.Duration(len(q.voters))
	return step*time.Duration(position) + core.RandomDuration(q.world.Entropy, 0, t/10)
}
