package quorum

import (
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/wire"
)

// A request naming the highest int32 epoch comes from no node (elections
// never get there) and is refused as invalid, leaving the epoch where it
// was. Followed, it left no room for the next election's epoch: an
// EndQuorumEpoch drawn by the broker's hostile-request test moved a voter
// to it, the voter campaigned, and the epoch wrapped to the lowest int32,
// which the assertion that epochs never go back halted on.
func TestAnEpochWithNoRoomForTheNextIsRefused(t *testing.T) {
	// Each sends node 2's request at the top epoch and returns where the
	// answer's error code will be.
	const top = math.MaxInt32
	cases := map[string]func(q *Quorum) *int16{
		"Vote": func(q *Quorum) *int16 {
			code := int16(-1)
			req := &kmsg.VoteRequest{Topics: []kmsg.VoteRequestTopic{{Topic: MetadataTopic,
				Partitions: []kmsg.VoteRequestTopicPartition{{CandidateID: 2, CandidateEpoch: top}}}}}
			q.HandleVote(req, func(resp *kmsg.VoteResponse) { code = resp.ErrorCode })
			return &code
		},
		"BeginQuorumEpoch": func(q *Quorum) *int16 {
			code := int16(-1)
			q.HandleBeginQuorumEpoch(&kmsg.BeginQuorumEpochRequest{Topics: []kmsg.BeginQuorumEpochRequestTopic{{Topic: MetadataTopic,
				Partitions: []kmsg.BeginQuorumEpochRequestTopicPartition{{LeaderID: 2, LeaderEpoch: top}}}}},
				func(resp *kmsg.BeginQuorumEpochResponse) { code = resp.ErrorCode })
			return &code
		},
		"EndQuorumEpoch": func(q *Quorum) *int16 {
			code := int16(-1)
			resign := &kmsg.EndQuorumEpochRequest{Topics: []kmsg.EndQuorumEpochRequestTopic{{Topic: MetadataTopic,
				Partitions: []kmsg.EndQuorumEpochRequestTopicPartition{{LeaderID: 2, LeaderEpoch: top}}}}}
			q.HandleEndQuorumEpoch(resign, func(resp *kmsg.EndQuorumEpochResponse) { code = resp.ErrorCode })
			return &code
		},
	}
	for name, send := range cases {
		t.Run(name, func(t *testing.T) {
			c := newTestCluster(t, 3, 0, 0)
			q := c.nodes[1].quorum
			before := q.epoch
			code := send(q)
			c.settle()
			if *code != kerr.InvalidRequest.Code {
				t.Fatalf("answered error %d, want INVALID_REQUEST (%d)", *code, kerr.InvalidRequest.Code)
			}
			if q.epoch != before {
				t.Fatalf("epoch %d after the request, want %d", q.epoch, before)
			}
			// Elections go on from the epoch the node had.
			electLeader(c)
			if leader, epoch, known := q.Leader(); !known || epoch <= before || epoch > before+10 {
				t.Fatalf("leader %d (known %v) in epoch %d after ten election timeouts from epoch %d", leader, known, epoch, before)
			}
		})
	}
}

// An answer naming such an epoch is ignored.
func TestAnAnswerWithAnEpochWithNoRoomForTheNextIsIgnored(t *testing.T) {
	c := newTestCluster(t, 3, 0, 0)
	q := c.nodes[1].quorum
	before := q.epoch
	if q.learnLeader(2, math.MaxInt32) || q.epoch != before {
		t.Fatalf("learned leader 2 at epoch %d: epoch now %d, want %d", int32(math.MaxInt32), q.epoch, before)
	}
}

// A metadata Fetch from below offset 0, or naming a last epoch newer than
// the leader's, is no follower's position: the leader refuses it as
// invalid, as KRaft does. Checked as a position, an offset below the
// start of a log with no snapshot sent the follower to a snapshot there
// was none of, and the leader halted (found by the broker's
// hostile-request test on the controller listener).
func TestAFetchFromNoFollowersPositionIsRefused(t *testing.T) {
	c := newTestCluster(t, 3, 0, 0)
	electLeader(c)
	leaderID, _, _ := c.nodes[1].quorum.Leader()
	leader := c.nodes[leaderID].quorum
	follower := c.nodes[c.ids[0]]
	if follower.id == leaderID {
		follower = c.nodes[c.ids[1]]
	}
	for name, position := range map[string]func(*kmsg.FetchRequestTopicPartition){
		"offset below 0":                  func(p *kmsg.FetchRequestTopicPartition) { p.FetchOffset = -2 },
		"a newer epoch than the leader's": func(p *kmsg.FetchRequestTopicPartition) { p.LastFetchedEpoch = p.CurrentLeaderEpoch + 1 },
	} {
		req := follower.quorum.fetchRequest()
		position(&req.Topics[0].Partitions[0])
		var code int16 = -1
		leader.HandleFetch(req, wire.ResponderFunc(func(resp kmsg.Response) {
			code = resp.(*kmsg.FetchResponse).Topics[0].Partitions[0].ErrorCode
		}))
		c.settle()
		if code != kerr.InvalidRequest.Code {
			t.Errorf("a fetch from %s: error %d, want INVALID_REQUEST (%d)", name, code, kerr.InvalidRequest.Code)
		}
	}
	if !leader.IsLeader() {
		t.Fatal("the leader stopped leading")
	}
}

// electLeader runs the cluster a millisecond at a time, delivering
// everything sent, until node 1 knows a leader, at most ten election
// timeouts.
func electLeader(c *testCluster) {
	for range 10 * testElectionTimeout / elapseStep {
		if _, _, known := c.nodes[1].quorum.Leader(); known {
			return
		}
		c.elapseAll(elapseStep)
		c.stabilize()
	}
}

// Raft elects at most one leader per epoch, so no node announces another
// leader of an epoch whose leader a node knows: a forged announcement is
// refused as invalid, and the same claim in an answer ignored. Followed,
// it broke the invariant that one epoch has one leader, which
// becomeFollower asserts: the node halted (found by the broker's
// hostile-request test against a quorum of three).
func TestAClaimOfASecondLeaderInAnEpochIsRefused(t *testing.T) {
	c := newTestCluster(t, 3, 0, 0)
	electLeader(c)
	leaderID, epoch, _ := c.nodes[1].quorum.Leader()
	for _, id := range c.ids {
		q := c.nodes[id].quorum
		claimed := c.ids[0]
		for claimed == id || claimed == leaderID {
			claimed++
		}
		code := int16(-1)
		q.HandleBeginQuorumEpoch(&kmsg.BeginQuorumEpochRequest{Topics: []kmsg.BeginQuorumEpochRequestTopic{{Topic: MetadataTopic,
			Partitions: []kmsg.BeginQuorumEpochRequestTopicPartition{{LeaderID: claimed, LeaderEpoch: epoch}}}}},
			func(resp *kmsg.BeginQuorumEpochResponse) { code = resp.Topics[0].Partitions[0].ErrorCode })
		c.settle()
		if code != kerr.InvalidRequest.Code {
			t.Errorf("node %d told %d leads epoch %d, which %d leads: error %d, want INVALID_REQUEST (%d)", id, claimed, epoch, leaderID, code, kerr.InvalidRequest.Code)
		}
		if q.learnLeader(claimed, epoch) {
			t.Errorf("node %d learned %d leads epoch %d from an answer, which %d leads", id, claimed, epoch, leaderID)
		}
		if got, gotEpoch, _ := q.Leader(); got != leaderID || gotEpoch != epoch {
			t.Errorf("node %d knows leader %d in epoch %d, want %d in %d", id, got, gotEpoch, leaderID, epoch)
		}
	}
}
