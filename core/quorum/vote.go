package quorum

import (
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Vote (API key 52, KIP-595; v2 adds PreVote, KIP-996). A prospective node
// asks every voter whether it would vote for it in the next epoch; a
// candidate asks for the vote itself. Sluice sends v2 and answers v0-v2.
//
// A voter grants a vote only to a candidate whose log is at least as up to
// date as its own, compared by (last epoch, end offset) (Raft §5.4.1), and
// only once per epoch (§5.2), the vote durable before the answer leaves. A
// pre-vote changes nothing and is granted on the log alone, but never by a
// node that has heard from a leader within FetchTimeout: a node that is
// merely cut off cannot win one and so never disrupts a working leader.

const voteVersion = 2

// electionTally counts the answers of one pre-vote or vote.
type electionTally struct {
	preVote bool
	// epoch is the epoch the votes are for: the next one for a pre-vote,
	// the candidate's own for a vote.
	epoch    int32
	granted  map[int32]bool
	rejected map[int32]bool
}

func newElectionTally(preVote bool, epoch int32) *electionTally {
	return &electionTally{preVote: preVote, epoch: epoch, granted: map[int32]bool{}, rejected: map[int32]bool{}}
}

// grantedVoters lists the voters that granted, sorted.
func (t *electionTally) grantedVoters() []int32 {
	ids := make([]int32, 0, len(t.granted))
	for id := range t.granted {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// requestVotes counts this node's own vote, then, once the election state
// is durable (a candidate's vote for itself must be), asks every other
// voter.
func (q *Quorum) requestVotes() {
	tally := q.election
	tally.granted[q.config.NodeID] = true
	q.afterStateDurable(func() {
		lastEpoch, end := q.lastEpoch(), q.metadataLog.EndOffset()
		generation := q.generation
		for _, id := range q.voters {
			if id == q.config.NodeID {
				continue
			}
			req := kmsg.NewPtrVoteRequest()
			req.Version = voteVersion
			req.VoterID = id
			topic := kmsg.NewVoteRequestTopic()
			topic.Topic = MetadataTopic
			p := kmsg.NewVoteRequestTopicPartition()
			p.CandidateEpoch = tally.epoch
			p.CandidateID = q.config.NodeID
			p.LastOffsetEpoch = lastEpoch
			p.LastOffset = end
			p.PreVote = tally.preVote
			topic.Partitions = append(topic.Partitions, p)
			req.Topics = append(req.Topics, topic)
			voter := id
			q.peers.Request(voter, req, q.config.RequestTimeout, func(resp kmsg.Response, err error) {
				if q.closed || q.generation != generation || err != nil {
					// A lost answer counts as no answer; the
					// election timeout starts another round.
					return
				}
				q.handleVoteResponse(voter, resp.(*kmsg.VoteResponse))
			})
		}
		q.checkElection()
	})
}

// handleVoteResponse counts one voter's answer, or follows the newer epoch
// or the leader it names.
func (q *Quorum) handleVoteResponse(voter int32, resp *kmsg.VoteResponse) {
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return
	}
	p := resp.Topics[0].Partitions[0]
	if q.learnLeader(p.LeaderID, p.LeaderEpoch) {
		return
	}
	if p.ErrorCode != 0 {
		return
	}
	if p.VoteGranted {
		q.election.granted[voter] = true
	} else {
		q.election.rejected[voter] = true
	}
	q.checkElection()
}

// checkElection ends the election once it is decided: a majority granted, or
// so many refused that a majority can no longer grant.
func (q *Quorum) checkElection() {
	tally := q.election
	switch {
	case len(tally.granted) >= q.majority && tally.preVote:
		q.becomeCandidate()
	case len(tally.granted) >= q.majority:
		q.becomeLeader()
	case len(q.voters)-len(tally.rejected) < q.majority && tally.preVote:
		// Lost the pre-vote: a majority still hears from a leader or
		// has a longer log. Go back to what this node was.
		if q.leaderID != noNode {
			q.becomeFollower(q.epoch, q.leaderID)
		} else {
			q.becomeUnattached(q.epoch, q.randomElectionTimeout())
		}
	}
	// A candidate that lost waits for its election timeout, then tries a
	// pre-vote again.
}

// contradictsLeader reports whether a claim that leaderID leads epoch
// contradicts the leader this node knows of that epoch (itself, when it
// leads: becomeLeader records it so). Raft elects at most one leader per
// epoch, so no node makes such a claim; a node of another cluster, or
// anything else that forged one, does, and following it would break the
// invariant that becomeFollower asserts.
func (q *Quorum) contradictsLeader(epoch, leaderID int32) bool {
	return epoch == q.epoch && leaderID != noNode && q.leaderID != noNode && q.leaderID != leaderID
}

// learnLeader acts on a (leader, epoch) another node reported, in any
// answer: a newer epoch is joined, and a leader of this epoch followed
// unless it is the one this node already knew of (a prospective node that
// stopped hearing from its leader hears of it from voters that still do:
// that is a reason to refuse its pre-vote, not to follow again). It reports
// whether the role changed.
func (q *Quorum) learnLeader(leaderID, epoch int32) bool {
	knownVoter := leaderID != noNode && leaderID != q.config.NodeID && q.isVoterID(leaderID)
	switch {
	case epoch > epochMax || q.contradictsLeader(epoch, leaderID):
		return false // not a node's answer (see epochMax, contradictsLeader)
	case epoch > q.epoch && knownVoter:
		q.becomeFollower(epoch, leaderID)
	case epoch > q.epoch:
		q.becomeUnattached(epoch, q.randomElectionTimeout())
	case epoch == q.epoch && knownVoter && q.leaderID != leaderID:
		q.becomeFollower(epoch, leaderID)
	default:
		return false
	}
	return true
}

// HandleVote answers a Vote request from a candidate or a prospective node.
func (q *Quorum) HandleVote(req *kmsg.VoteRequest, done func(*kmsg.VoteResponse)) {
	resp := req.ResponseKind().(*kmsg.VoteResponse)
	if len(req.Topics) != 1 || req.Topics[0].Topic != MetadataTopic || len(req.Topics[0].Partitions) != 1 || req.Topics[0].Partitions[0].Partition != 0 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		done(resp)
		return
	}
	p := req.Topics[0].Partitions[0]
	answer := func(code int16, granted bool) {
		topic := kmsg.NewVoteResponseTopic()
		topic.Topic = MetadataTopic
		part := kmsg.NewVoteResponseTopicPartition()
		part.ErrorCode = code
		part.LeaderID = q.knownLeader()
		part.LeaderEpoch = q.epoch
		part.VoteGranted = granted
		topic.Partitions = append(topic.Partitions, part)
		resp.Topics = append(resp.Topics, topic)
		// The answer leaves once the state it reports is durable.
		if granted && q.world.Canaries.On(CanaryVoteBeforeDurable) {
			done(resp)
			return
		}
		q.state.afterDurable(func() { done(resp) })
	}
	switch {
	case q.closed:
		resp.ErrorCode = kerr.BrokerNotAvailable.Code
		done(resp)
		return
	case p.CandidateEpoch > epochMax:
		resp.ErrorCode = kerr.InvalidRequest.Code
		done(resp)
		return
	case !q.isVoter || !q.isVoterID(p.CandidateID) || p.CandidateID == q.config.NodeID:
		answer(kerr.InconsistentVoterSet.Code, false)
		return
	case p.CandidateEpoch < q.epoch:
		answer(kerr.FencedLeaderEpoch.Code, false)
		return
	}
	if !p.PreVote && p.CandidateEpoch > q.epoch {
		// A real vote in a newer epoch moves this node there, a leader
		// included (it stops leading: a majority let the candidate
		// past its pre-vote, so this leader has lost them).
		q.becomeUnattached(p.CandidateEpoch, q.randomElectionTimeout())
	}
	granted := q.mayGrant(p)
	if granted && !p.PreVote {
		// Raft §5.2: the vote is recorded, and durable before the
		// answer leaves; waiting for the candidate restarts the
		// election timeout. A prospective or candidate node gives up
		// its own election.
		if q.role != roleUnattached {
			q.becomeUnattached(q.epoch, 0)
		}
		q.votedFor = p.CandidateID
		q.saveState()
		q.restartElectionTimer(q.randomElectionTimeout())
		q.logger.Info("voted", "epoch", q.epoch, "candidate", p.CandidateID)
	}
	answer(0, granted)
}

// mayGrant decides a (pre-)vote for the candidate. For a real vote the
// request's epoch is the node's epoch by now.
func (q *Quorum) mayGrant(p kmsg.VoteRequestTopicPartition) bool {
	upToDate := compareLogs(p.LastOffsetEpoch, p.LastOffset, q.lastEpoch(), q.metadataLog.EndOffset()) >= 0
	if p.PreVote {
		switch {
		case q.role == roleLeader:
			return false
		case q.role == roleFollower && q.fetcher.heardWithin(q.world.Clock.Elapsed(), q.config.FetchTimeout):
			return false
		}
		return upToDate
	}
	switch {
	case q.role == roleLeader || q.role == roleFollower:
		// This epoch has a leader; a vote could elect a second.
		return false
	case q.votedFor != noNode && q.votedFor != p.CandidateID:
		// The planted bug: an unattached voter that voted for another
		// candidate votes again.
		return q.role == roleUnattached && q.world.Canaries.On(CanaryDoubleVote) && upToDate
	}
	return upToDate
}

// compareLogs orders two logs by how up to date they are: by the epoch of
// their last batch, then by their end offset (Raft §5.4.1).
func compareLogs(epochA int32, endA int64, epochB int32, endB int64) int {
	switch {
	case epochA != epochB && epochA < epochB:
		return -1
	case epochA != epochB:
		return 1
	case endA < endB:
		return -1
	case endA > endB:
		return 1
	}
	return 0
}

// lastEpoch is the epoch of the last batch in the log or, when the log is
// empty, of the snapshot it starts at (KRaft's rule: a log emptied by a
// truncation or a crash forgets its epochs, but the snapshot remembers the
// last one); -1 for a new log.
func (q *Quorum) lastEpoch() int32 {
	l := q.metadataLog
	if l.EndOffset() == l.StartOffset() {
		if s, ok := q.snapshotEndingAt(l.StartOffset()); ok {
			return s.epoch
		}
	}
	return l.LatestEpoch()
}
