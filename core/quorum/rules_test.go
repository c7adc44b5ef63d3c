package quorum

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

// Unit tests of the rules, each on a cluster driven through the harness
// (harness_test.go). Scenarios that read best as a trace are scripts under
// testdata/ instead.

// elect makes node id the leader of a fresh cluster and lets everyone
// settle.
func elect(t *testing.T, c *testCluster, id int32) {
	t.Helper()
	c.nodes[id].quorum.electionTimeout()
	c.settle()
	c.stabilize()
	if !c.nodes[id].quorum.IsLeader() {
		t.Fatalf("node %d did not become leader:\n%s", id, c.out.String())
	}
}

// vote asks node id for a (pre-)vote directly and returns the answer,
// after settling (the answer waits for the vote to be durable).
func (c *testCluster) vote(id, candidate, epoch int32, lastEpoch int32, lastOffset int64, preVote bool) *kmsg.VoteResponseTopicPartition {
	req := kmsg.NewPtrVoteRequest()
	req.Version = voteVersion
	topic := kmsg.NewVoteRequestTopic()
	topic.Topic = MetadataTopic
	p := kmsg.NewVoteRequestTopicPartition()
	p.CandidateEpoch, p.CandidateID, p.LastOffsetEpoch, p.LastOffset, p.PreVote = epoch, candidate, lastEpoch, lastOffset, preVote
	topic.Partitions = append(topic.Partitions, p)
	req.Topics = append(req.Topics, topic)
	var answer *kmsg.VoteResponseTopicPartition
	c.nodes[id].quorum.HandleVote(req, func(resp *kmsg.VoteResponse) {
		part := resp.Topics[0].Partitions[0]
		answer = &part
	})
	c.settle()
	return answer
}

// Raft §5.2: one vote per epoch, to a candidate whose log is at least as
// up to date (§5.4.1); a higher epoch moves the voter there first.
func TestVoteRules(t *testing.T) {
	c := newTestCluster(t, 5, 0, 0)
	elect(t, c, 1)
	c.nodes[1].quorum.Propose([]metadata.Record{testRecord("a")}, func(int64, error) {})
	c.settle()
	c.stabilize()
	// Every log is now [LeaderChange@1, a@1]: last epoch 1, end 2.

	// A follower of a live leader refuses a vote in its epoch and a
	// pre-vote for the next.
	if a := c.vote(2, 3, 1, 1, 2, false); a.VoteGranted || a.LeaderID != 1 {
		t.Fatalf("follower granted a vote in its leader's epoch: %+v", a)
	}
	if a := c.vote(2, 3, 2, 1, 2, true); a.VoteGranted {
		t.Fatalf("follower that hears its leader granted a pre-vote: %+v", a)
	}
	// A stale epoch is fenced.
	if a := c.vote(2, 3, 0, 1, 2, false); a.VoteGranted || a.ErrorCode != kerr.FencedLeaderEpoch.Code {
		t.Fatalf("stale candidate: %+v", a)
	}
	// A candidate with a shorter log, or an older last epoch, is refused
	// even in a newer epoch; the voter still moves to that epoch.
	if a := c.vote(2, 3, 2, 1, 1, false); a.VoteGranted || a.LeaderEpoch != 2 {
		t.Fatalf("shorter log granted, or epoch not taken: %+v", a)
	}
	if a := c.vote(2, 3, 3, 0, 9, false); a.VoteGranted {
		t.Fatalf("older last epoch granted: %+v", a)
	}
	// An up-to-date candidate gets the vote; a second candidate in the
	// same epoch does not, however good its log; the first may ask again.
	if a := c.vote(2, 3, 4, 1, 2, false); !a.VoteGranted {
		t.Fatalf("up-to-date candidate refused: %+v", a)
	}
	if a := c.vote(2, 4, 4, 2, 50, false); a.VoteGranted {
		t.Fatalf("second candidate in one epoch granted: %+v", a)
	}
	if a := c.vote(2, 3, 4, 1, 2, false); !a.VoteGranted {
		t.Fatalf("the same candidate asking again refused: %+v", a)
	}
	if q := c.nodes[2].quorum; q.epoch != 4 || q.votedFor != 3 || q.role != roleUnattached {
		t.Fatalf("voter state epoch %d voted %d role %v", q.epoch, q.votedFor, q.role)
	}
	// The leader refuses pre-votes; non-voters are refused as voters.
	if a := c.vote(1, 3, 2, 1, 2, true); a.VoteGranted {
		t.Fatalf("leader granted a pre-vote: %+v", a)
	}
	if a := c.vote(2, 9, 5, 1, 2, false); a.VoteGranted || a.ErrorCode != kerr.InconsistentVoterSet.Code {
		t.Fatalf("unknown candidate: %+v", a)
	}
}

// A vote is answered only once it is durable, and a restart remembers it:
// the voter never votes for another candidate in that epoch.
func TestVoteIsDurableBeforeTheAnswerAndSurvivesRestart(t *testing.T) {
	c := newTestCluster(t, 3, 0, 0)
	n := c.nodes[2]
	n.stalled = true
	var answers []bool
	req := kmsg.NewPtrVoteRequest()
	topic := kmsg.NewVoteRequestTopic()
	topic.Topic = MetadataTopic
	p := kmsg.NewVoteRequestTopicPartition()
	p.CandidateEpoch, p.CandidateID, p.LastOffsetEpoch = 1, 1, -1
	topic.Partitions = append(topic.Partitions, p)
	req.Topics = append(req.Topics, topic)
	n.quorum.HandleVote(req, func(resp *kmsg.VoteResponse) {
		answers = append(answers, resp.Topics[0].Partitions[0].VoteGranted)
	})
	c.settle()
	if len(answers) != 0 {
		t.Fatalf("answered %v before the vote was durable", answers)
	}
	n.resume()
	c.settle()
	if len(answers) != 1 || !answers[0] {
		t.Fatalf("answers %v", answers)
	}
	n.crash()
	n.restart()
	c.settle()
	if a := c.vote(2, 3, 1, 5, 100, false); a.VoteGranted {
		t.Fatalf("after a restart, voted for a second candidate in epoch 1: %+v", a)
	}
	if q := n.quorum; q.epoch != 1 || q.votedFor != 1 {
		t.Fatalf("restarted with epoch %d vote %d", q.epoch, q.votedFor)
	}
}

// A crash before the vote is durable loses the vote and the answer with
// it: nothing was promised.
func TestVoteNotDurableIsNeverAnswered(t *testing.T) {
	c := newTestCluster(t, 3, 0, 0)
	n := c.nodes[2]
	n.stalled = true
	answered := false
	req := kmsg.NewPtrVoteRequest()
	topic := kmsg.NewVoteRequestTopic()
	topic.Topic = MetadataTopic
	p := kmsg.NewVoteRequestTopicPartition()
	p.CandidateEpoch, p.CandidateID, p.LastOffsetEpoch = 1, 1, -1
	topic.Partitions = append(topic.Partitions, p)
	req.Topics = append(req.Topics, topic)
	n.quorum.HandleVote(req, func(*kmsg.VoteResponse) { answered = true })
	c.settle()
	n.crash()
	n.restart()
	c.settle()
	if answered {
		t.Fatal("answered a vote that was never durable")
	}
	if a := c.vote(2, 3, 1, -1, 0, false); !a.VoteGranted {
		t.Fatalf("a vote lost in a crash still binds: %+v", a)
	}
}

// The single-node quorum: a sole voter elects itself at once, and at every
// start delivers its whole log before Open returns.
func TestSoleVoter(t *testing.T) {
	c := newTestCluster(t, 1, 0, 0)
	n := c.nodes[1]
	if !n.quorum.IsLeader() {
		t.Fatalf("sole voter does not lead: %s", n.status())
	}
	for _, value := range []string{"a", "b", "c"} {
		n.quorum.Propose([]metadata.Record{testRecord(value)}, func(_ int64, err error) {
			if err != nil {
				t.Fatal(err)
			}
		})
		c.settle()
	}
	if got := strings.Join(n.state.applied, " "); got != "1:a 2:b 3:c" {
		t.Fatalf("applied %q", got)
	}
	for range 2 {
		n.crash()
		n.process.Restart()
		n.start() // Open alone, before anything settles
		if got := strings.Join(n.state.applied, " "); !strings.HasPrefix(got, "1:a 2:b 3:c") {
			t.Fatalf("after a restart Open delivered %q", got)
		}
		c.settle()
		if !n.quorum.IsLeader() {
			t.Fatalf("restarted sole voter does not lead: %s", n.status())
		}
	}
	if epoch := n.quorum.epoch; epoch != 3 {
		t.Fatalf("three starts should make three epochs, have %d", epoch)
	}
}

// The leader's answer to a fetch position (KRaft's validateOffsetAndEpoch).
func TestFetchPositionRules(t *testing.T) {
	c := newTestCluster(t, 3, 0, 2)
	elect(t, c, 1)
	for _, value := range []string{"a", "b", "c"} {
		c.nodes[1].quorum.Propose([]metadata.Record{testRecord(value)}, func(int64, error) {})
		c.settle()
		c.stabilize()
	}
	// Node 1 leads epoch 1 over [LeaderChange a b c] and snapshots every
	// two offsets: its newest snapshot ends at 4, and its log starts
	// there.
	q := c.nodes[1].quorum
	if start, end := q.metadataLog.StartOffset(), q.metadataLog.EndOffset(); start != 4 || end != 4 {
		t.Fatalf("log [%d, %d), snapshots %v", start, end, q.snapshots)
	}
	q.Propose([]metadata.Record{testRecord("d")}, func(int64, error) {})
	c.settle() // [4, 5) in epoch 1
	cases := []struct {
		offset    int64
		lastEpoch int32
		want      string
	}{
		{4, 1, "valid"},           // at the start, the snapshot's epoch
		{5, 1, "valid"},           // at the end
		{3, 1, "snapshot 4-1"},    // below the start
		{4, 0, "snapshot 4-1"},    // at the start, another epoch
		{5, 0, "snapshot 4-1"},    // an epoch older than the snapshot's
		{6, 1, "diverging 1/5"},   // past the end of epoch 1 (here: the log)
		{0, -1, "snapshot 4-1"},   // a new replica
		{5, 2, "diverging -1/-1"}, // an epoch this leader never had
	}
	for _, tc := range cases {
		got := q.checkFetchPosition(tc.offset, tc.lastEpoch)
		text := "valid"
		switch {
		case got.snapshot != nil:
			text = "snapshot " + got.snapshot.String()
		case got.diverging != nil:
			text = "diverging " + itoa(int64(got.diverging.Epoch)) + "/" + itoa(got.diverging.EndOffset)
		}
		if text != tc.want {
			t.Errorf("fetch at %d with last epoch %d: %s, want %s", tc.offset, tc.lastEpoch, text, tc.want)
		}
	}
}

// A follower never truncates what it knows committed: the leader has it
// all, so being told otherwise is a bug, and an assertion says so.
func TestTruncationBelowCommittedPanics(t *testing.T) {
	c := newTestCluster(t, 3, 0, 0)
	elect(t, c, 1)
	c.nodes[1].quorum.Propose([]metadata.Record{testRecord("a")}, func(int64, error) {})
	c.settle()
	c.stabilize()
	q := c.nodes[2].quorum
	if q.highWatermark != 2 {
		t.Fatalf("follower high watermark %d", q.highWatermark)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "committed") {
			t.Fatalf("no assertion: %v", r)
		}
	}()
	q.truncateToDivergence(1, 1)
}

// An observer (not a voter) finds the leader by asking voters, replicates
// and applies, is refused as a voter, and does not count toward commitment.
func TestObserver(t *testing.T) {
	c := newTestCluster(t, 3, 1, 0)
	elect(t, c, 2)
	observer := c.nodes[4]
	c.nodes[4].clock.advance(retryBackoff, c.settle)
	c.stabilize()
	c.nodes[2].quorum.Propose([]metadata.Record{testRecord("a")}, func(int64, error) {})
	c.settle()
	c.stabilize()
	if observer.quorum.role != roleFollower || strings.Join(observer.state.applied, " ") != "1:a" {
		t.Fatalf("observer %s applied %v", observer.status(), observer.state.applied)
	}
	if a := c.vote(4, 1, 9, 9, 9, false); a.VoteGranted || a.ErrorCode != kerr.InconsistentVoterSet.Code {
		t.Fatalf("observer voted: %+v", a)
	}
	// With both other voters' disks stalled, the observer's synced copy
	// does not make a majority.
	c.nodes[1].stalled, c.nodes[3].stalled = true, true
	c.nodes[2].quorum.Propose([]metadata.Record{testRecord("b")}, func(int64, error) {})
	c.settle()
	c.stabilize()
	if hw := c.nodes[2].quorum.highWatermark; hw != 2 {
		t.Fatalf("committed with the observer's copy: high watermark %d", hw)
	}
}

// If quorum-state lags the log (a follower appended in an epoch whose state
// write a crash lost), the node takes the log's epoch at Open.
func TestEpochComesFromTheLogWhenStateLags(t *testing.T) {
	c := newTestCluster(t, 3, 0, 0)
	elect(t, c, 1)
	n := c.nodes[3]
	n.crash()
	n.process.Restart()
	if err := n.disk.Remove("__cluster_metadata-0/quorum-state"); err != nil {
		t.Fatal(err)
	}
	n.disk.SyncDir("__cluster_metadata-0", func(error) {})
	c.settle() // the file is gone for good, as if it had never been written
	n.start()
	if q := n.quorum; q.epoch != 1 || q.votedFor != noNode {
		t.Fatalf("restarted at epoch %d vote %d, want epoch 1 from the log and no vote", q.epoch, q.votedFor)
	}
}

func TestHandleRequestRoutesOnlyTheQuorumsRequests(t *testing.T) {
	c := newTestCluster(t, 3, 0, 0)
	q := c.nodes[1].quorum
	other := kmsg.NewPtrFetchRequest()
	other.Version = fetchVersion
	topic := kmsg.NewFetchRequestTopic()
	topic.TopicID = [16]byte{1}
	topic.Partitions = append(topic.Partitions, kmsg.NewFetchRequestTopicPartition())
	other.Topics = append(other.Topics, topic)
	if q.HandleRequest(other, func(kmsg.Response) {}) {
		t.Fatal("routed a fetch of another topic")
	}
	if q.HandleRequest(kmsg.NewPtrMetadataRequest(), func(kmsg.Response) {}) {
		t.Fatal("routed a Metadata request")
	}
	if !q.HandleRequest(q.fetchRequest(), func(kmsg.Response) {}) {
		t.Fatal("did not route a metadata fetch")
	}
}

// A restarted follower has delivered only its snapshot at Open; it reports
// itself caught up once it has delivered up to the first high watermark it
// hears from the leader. A sole voter is caught up at Open.
func TestCaughtUp(t *testing.T) {
	c := newTestCluster(t, 3, 0, 0)
	elect(t, c, 1)
	for _, value := range []string{"a", "b"} {
		c.nodes[1].quorum.Propose([]metadata.Record{testRecord(value)}, func(int64, error) {})
		c.settle()
		c.stabilize()
	}
	n := c.nodes[3]
	n.crash()
	n.restart()
	caught := 0
	n.quorum.OnCaughtUp(func() { caught++ })
	if n.quorum.CaughtUp() || len(n.state.applied) != 0 {
		t.Fatalf("caught up at Open with %v", n.state.applied)
	}
	c.settle()
	c.stabilize()
	if !n.quorum.CaughtUp() || caught != 1 || strings.Join(n.state.applied, " ") != "1:a 2:b" {
		t.Fatalf("caught up %v (%d calls), applied %v\n%s", n.quorum.CaughtUp(), caught, n.state.applied, c.out.String())
	}

	sole := newTestCluster(t, 1, 0, 0)
	if !sole.nodes[1].quorum.CaughtUp() {
		t.Fatal("a sole voter is not caught up at Open")
	}
}
