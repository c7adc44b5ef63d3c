package quorum

import (
	"fmt"
	"time"

	"sluice/core"
)

// role is what a node is doing in its current epoch (KIP-595's states, with
// KIP-996's prospective one). The legal moves:
//
//	unattached  -> prospective (election timeout), follower (learns the leader), unattached (newer epoch)
//	follower    -> prospective (fetch timeout), follower/unattached (newer epoch, or the leader resigned)
//	prospective -> candidate (a majority granted the pre-vote), follower/unattached (lost it, or newer epoch)
//	candidate   -> leader (a majority voted for it), prospective (election timeout), follower/unattached
//	leader      -> unattached (resigned, or check-quorum failed), follower/unattached (newer epoch)
//
// Observers (nodes that are not voters) are only ever unattached or
// followers. Only a prospective node becomes a candidate, and only a
// candidate becomes a leader.
type role int8

const (
	// roleUnattached knows the epoch but no leader. A voter waits for its
	// election timeout; an observer asks voters who leads.
	roleUnattached role = iota
	// roleProspective asks the voters whether they would vote for it
	// (pre-vote) without changing any epoch.
	roleProspective
	// roleCandidate moved to a new epoch, voted for itself and asks for
	// votes.
	roleCandidate
	// roleLeader won its epoch: it appends, and followers fetch from it.
	roleLeader
	// roleFollower knows the epoch's leader and fetches from it.
	roleFollower
)

func (r role) String() string {
	switch r {
	case roleUnattached:
		return "unattached"
	case roleProspective:
		return "prospective"
	case roleCandidate:
		return "candidate"
	case roleLeader:
		return "leader"
	case roleFollower:
		return "follower"
	}
	return fmt.Sprintf("role(%d)", int8(r))
}

// leaveRole ends the current role: its timers stop, answers and timers
// armed in it will find the generation changed, and its per-role state
// goes. A leader's pending proposals fail and its held fetches are answered.
func (q *Quorum) leaveRole() {
	q.generation++
	if q.electionTimer != nil {
		q.electionTimer.Stop()
		q.electionTimer = nil
	}
	if l := q.leader; l != nil {
		l.stopTimers()
		held := l.takeHeldFetches()
		q.deferred = append(q.deferred, func() {
			l.failProposals(ErrNotLeader)
			for _, h := range held {
				q.answerFetchError(h.request, h.done, notLeaderCode)
			}
		})
	}
	if f := q.fetcher; f != nil {
		for _, t := range []core.Timer{f.timer, f.retryTimer} {
			if t != nil {
				t.Stop()
			}
		}
		q.abandonSnapshotDownload()
	}
	q.leader, q.election, q.fetcher = nil, nil, nil
}

// finishTransition ends every role change: the invariants are checked, the
// listeners told, and what the old role owed is paid.
func (q *Quorum) finishTransition() {
	q.checkInvariants()
	q.notifyLeaderChange()
	q.runDeferred()
}

// finishTransitionThen finishes a role change and then starts the new
// role's work, unless something the transition called (a listener) has
// changed the role again meanwhile.
func (q *Quorum) finishTransitionThen(start func()) {
	generation := q.generation
	q.finishTransition()
	if q.generation == generation && !q.closed {
		start()
	}
}

func (q *Quorum) runDeferred() {
	for len(q.deferred) > 0 {
		f := q.deferred[0]
		q.deferred = q.deferred[1:]
		f()
	}
}

// setEpoch moves to epoch, forgetting the vote and leader of the old one.
// Epochs never go back.
func (q *Quorum) setEpoch(epoch int32) {
	if epoch < q.epoch {
		panic(fmt.Sprintf("quorum: epoch would go back from %d to %d", q.epoch, epoch))
	}
	if epoch > q.epoch {
		q.epoch, q.votedFor, q.leaderID = epoch, noNode, noNode
	}
}

// becomeUnattached moves to epoch knowing no leader: after a newer epoch
// was seen, a leader resigned, a pre-vote was lost, or an observer lost its
// leader. A voter starts an election after electionDelay unless it hears
// from a leader first.
func (q *Quorum) becomeUnattached(epoch int32, electionDelay time.Duration) {
	q.leaveRole()
	q.setEpoch(epoch)
	q.leaderID = noNode
	q.role = roleUnattached
	q.saveState()
	q.logger.Info("became unattached", "epoch", q.epoch, "voted_for", q.votedFor)
	if q.isVoter {
		if !q.retiring {
			q.restartElectionTimer(electionDelay)
		}
	} else {
		q.fetcher = q.newFetcherState()
		q.afterStateDurable(q.maybeFetch)
	}
	q.finishTransition()
}

// becomeFollower follows leaderID in epoch. The leader of an epoch is unique,
// so learning a different one for the current epoch is impossible.
func (q *Quorum) becomeFollower(epoch, leaderID int32) {
	switch {
	case leaderID == q.config.NodeID || !q.isVoterID(leaderID):
		panic(fmt.Sprintf("quorum: node %d cannot follow %d", q.config.NodeID, leaderID))
	case epoch == q.epoch && q.role == roleLeader:
		panic(fmt.Sprintf("quorum: two leaders in epoch %d: this node and %d", epoch, leaderID))
	case epoch == q.epoch && q.leaderID != noNode && q.leaderID != leaderID:
		panic(fmt.Sprintf("quorum: two leaders in epoch %d: %d and %d", epoch, q.leaderID, leaderID))
	}
	q.leaveRole()
	q.setEpoch(epoch)
	q.leaderID = leaderID
	q.role = roleFollower
	q.saveState()
	q.logger.Info("became follower", "epoch", q.epoch, "leader", leaderID)
	q.fetcher = q.newFetcherState()
	q.resetFetchTimer()
	// Fetching appends batches of this epoch: the epoch must be durable
	// first.
	q.afterStateDurable(q.maybeFetch)
	q.finishTransition()
}

// becomeProspective starts a pre-vote (KIP-996): it asks the voters whether
// they would vote for this node in the next epoch, changing nothing durable,
// so that a node that cannot win (one cut off from the others, say) never
// disrupts the current leader by raising the epoch.
func (q *Quorum) becomeProspective() {
	if !q.isVoter || q.retiring || q.role == roleLeader {
		panic(fmt.Sprintf("quorum: node %d (voter %v, retiring %v) cannot become prospective as %v", q.config.NodeID, q.isVoter, q.retiring, q.role))
	}
	q.leaveRole()
	q.role = roleProspective
	q.election = newElectionTally(true, q.epoch+1)
	q.restartElectionTimer(q.randomElectionTimeout())
	q.logger.Info("became prospective", "epoch", q.epoch)
	q.finishTransitionThen(q.requestVotes)
}

// becomeCandidate moves to the next epoch and votes for itself (Raft §5.2).
// Only a prospective node that won its pre-vote may.
func (q *Quorum) becomeCandidate() {
	if q.role != roleProspective {
		panic(fmt.Sprintf("quorum: becoming a candidate from %v", q.role))
	}
	q.leaveRole()
	q.setEpoch(q.epoch + 1)
	q.votedFor = q.config.NodeID
	q.role = roleCandidate
	q.saveState()
	q.election = newElectionTally(false, q.epoch)
	q.restartElectionTimer(q.randomElectionTimeout())
	q.logger.Info("became candidate", "epoch", q.epoch)
	q.finishTransitionThen(q.requestVotes)
}

// becomeLeader takes the lead of the candidate's epoch, once a majority
// voted for it.
func (q *Quorum) becomeLeader() {
	if q.role != roleCandidate || q.votedFor != q.config.NodeID || len(q.election.granted) < q.majority {
		panic(fmt.Sprintf("quorum: becoming leader from %v, voted for %d, %d votes", q.role, q.votedFor, len(q.election.granted)))
	}
	granted := q.election.grantedVoters()
	q.leaveRole()
	q.role = roleLeader
	q.leaderID = q.config.NodeID
	q.saveState()
	q.leader = newLeaderState(q, granted)
	q.eventLogger().Info("became leader", "epoch", q.epoch, "granted", fmt.Sprint(granted))
	q.finishTransitionThen(q.startLeading)
}

// restartElectionTimer arms the election timeout of an unattached,
// prospective or candidate voter, replacing the one armed before.
func (q *Quorum) restartElectionTimer(d time.Duration) {
	if q.electionTimer != nil {
		q.electionTimer.Stop()
	}
	q.electionTimer = q.after(d, q.electionTimeout)
}

// electionTimeout fires when a voter has waited long enough without a
// leader: an unattached voter's election timeout, a follower's fetch
// timeout, a prospective or candidate node's election that did not end.
// An observer that lost its leader goes looking for the next one.
func (q *Quorum) electionTimeout() {
	switch {
	case q.closed || q.role == roleLeader:
		return
	case !q.isVoter:
		q.becomeUnattached(q.epoch, 0)
	case !q.retiring:
		q.becomeProspective()
	}
}
