package quorumworkload

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/sim/kernel"
)

// A vote is a promise: Raft §5.2 has a voter record it on stable storage
// before it answers, so that it never grants a second vote in the same
// epoch, even after a crash. The nemesis's crashes come at random times and
// almost never land in the few milliseconds between a vote and its sync, so
// half the seeds also crash a voter just after it granted a real vote, with
// a chance per vote, within twice the disk's slowest sync: if the answer
// left before the vote was durable, the node comes back without it. Its own
// stream of the seed draws all of it, so the other faults stay where they
// were.

// crashAfterVote is what a seed draws for the fault.
type crashAfterVote struct {
	// chance is the chance that a granted vote is followed by a crash of
	// the voter (zero: never).
	chance float64
	rng    random
}

// Bounds of the draw.
const (
	crashAfterVoteSeedChance = 0.5
	crashAfterVoteChanceMin  = 0.1
	crashAfterVoteChanceMax  = 0.5
)

func drawCrashAfterVote(seed uint64) crashAfterVote {
	rng := kernel.NewRand(seed, "nemesis/crash-after-vote")
	c := crashAfterVote{rng: rng}
	if rng.Float64() < crashAfterVoteSeedChance {
		c.chance = crashAfterVoteChanceMin + rng.Float64()*(crashAfterVoteChanceMax-crashAfterVoteChanceMin)
	}
	return c
}

// voteAnswered is called as a node's answer to a Vote request leaves.
func (n *node) voteAnswered(req kmsg.Request, resp kmsg.Response) {
	r := n.run
	c := &r.crashAfterVote
	if c.chance == 0 || r.faultsStopped || !granted(req, resp) || c.rng.Float64() >= c.chance {
		return
	}
	window := 2 * max(n.machine.Disk.Faults().SyncLatencyMax, time.Millisecond)
	delay := kernel.Between(c.rng, 0, window)
	restart := kernel.Between(c.rng, 0, r.settings.restartMax)
	incarnation := n.crashes
	r.kernel.Schedule(int64(delay), nil, "nemesis.crash-after-vote", func() {
		if r.faultsStopped || !n.up || n.crashes != incarnation {
			return
		}
		r.counts.crashesAfterVote++
		r.applied(faultCrashAfterVote)
		r.note(fmt.Sprintf("crash %s %v after it voted", n.name, time.Duration(delay)))
		n.crash(restart)
	})
}

// faultCrashAfterVote names the fault on the coverage line.
const faultCrashAfterVote = "crash-after-vote"

// granted reports whether resp grants a real (not pre-) vote.
func granted(req kmsg.Request, resp kmsg.Response) bool {
	vote, ok := req.(*kmsg.VoteRequest)
	answer, answered := resp.(*kmsg.VoteResponse)
	if !ok || !answered || len(vote.Topics) != 1 || len(vote.Topics[0].Partitions) != 1 || vote.Topics[0].Partitions[0].PreVote {
		return false
	}
	return answer.ErrorCode == 0 && len(answer.Topics) == 1 && len(answer.Topics[0].Partitions) == 1 && answer.Topics[0].Partitions[0].VoteGranted
}
