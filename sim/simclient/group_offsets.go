package simclient

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/jepsen/history"
)

// This file is the consumer's committed offsets: OffsetCommit after each
// poll that moved a position, and OffsetFetch to learn where a generation's
// partitions start (and, now and then, to read commits back).

// commitBuffers are what a consumer builds its commits with, kept from one
// commit to the next: a consumer has one in flight at most (busy), the
// history copies the commits it records, and the client keeps nothing of
// a request once it has answered it. A commit used to allocate them all.
type commitBuffers struct {
	// commits are those of the commit in flight, until it is answered;
	// epoch is the membership epoch it began in.
	commits    []history.Commit
	epoch      int
	request    kmsg.OffsetCommitRequest
	topics     []kmsg.OffsetCommitRequestTopic
	partitions []kmsg.OffsetCommitRequestTopicPartition
}

// commit stores the positions that moved since the last commit, with the
// member's generation and id, and records it as a commit op.
func (g *GroupConsumer) commit() {
	m := &g.membership
	b := &g.committing
	b.commits = b.commits[:0]
	for _, tp := range g.committable() {
		p := m.positions[tp]
		if p.offset == history.OffsetUnknown || p.offset == p.committed {
			continue
		}
		b.commits = append(b.commits, history.Commit{Group: g.config.Group, Partition: tp, Offset: p.offset, Generation: m.generation})
	}
	if len(b.commits) == 0 {
		panic(fmt.Sprintf("simclient: %s commits with no position moved", g.client.Name()))
	}
	req := &b.request
	*req = kmsg.OffsetCommitRequest{}
	req.Default()
	req.Group = g.config.Group
	req.Generation = m.generation
	req.MemberID = m.memberID
	req.InstanceID = g.instanceID()
	// Every partition goes in one array, each topic's run of it capped
	// at its end.
	partitions := slices.Grow(b.partitions[:0], len(b.commits))[:len(b.commits)]
	topics := b.topics[:0]
	run := 0 // where the last topic's partitions start
	for i, commit := range b.commits {
		partition := &partitions[i]
		*partition = kmsg.NewOffsetCommitRequestTopicPartition()
		partition.Partition = commit.Partition.Partition
		partition.Offset = commit.Offset
		partition.LeaderEpoch = -1
		if n := len(topics); n == 0 || topics[n-1].Topic != commit.Partition.Topic {
			topic := kmsg.NewOffsetCommitRequestTopic()
			topic.Topic = commit.Partition.Topic
			topics = append(topics, topic)
			run = i
		}
		topics[len(topics)-1].Partitions = partitions[run : i+1 : i+1]
	}
	b.partitions, b.topics = partitions, topics
	req.Topics = topics
	g.op = g.invoke(history.FuncCommit, history.Payload{Commits: b.commits})
	g.stats.Commits++
	g.busy = true
	b.epoch = m.epoch
	g.client.RequestAddress(m.coordinator, req, g.commitAnsweredEvent)
}

// commitAnswered takes the answer to the commit in flight, whose op is
// g.op.
func (g *GroupConsumer) commitAnswered(resp kmsg.Response, err error) {
	m, b, op := &g.membership, &g.committing, g.op
	g.busy, g.op = false, nil
	var o outcome
	var code int16
	if err != nil {
		o = transportOutcome(err)
	} else {
		o, code, err = readCommitAnswer(resp.(*kmsg.OffsetCommitResponse), b.commits)
	}
	switch {
	case o == written:
		g.stats.CommitsOK++
		op.OK(history.Payload{})
		for _, commit := range b.commits {
			m.positions[commit.Partition].committed = commit.Offset
		}
		if g.config.VerifyCommitChance > 0 && g.client.rng.Float64() < g.config.VerifyCommitChance {
			m.verifyPending = true
		}
		g.schedule(0)
		return
	case o.mayBeWritten():
		g.stats.CommitsInfo++
		g.info(op, err.Error())
	default:
		g.stats.CommitsFailed++
		op.Fail(err.Error())
	}
	switch {
	case g.cooperative() && g.rebalancing(b.epoch) && isMembershipError(code):
		// The rebalance under way decides the membership: the
		// commit went with the generation it is replacing.
	case g.membershipLost(code):
		// A commit before rejoining that the coordinator refused
		// for membership is not worth another try.
		m.finalCommitTried = true
	case code == 0 || coordinatorMoved(code):
		// A transport error or a coordinator that moved.
		g.coordinatorLost(err)
	}
	g.backOff()
}

// readCommitAnswer reads an OffsetCommit answer for the commits sent: ok
// when every partition was, not written when none was, unknown otherwise.
// code is the first error code met (0 for none).
func readCommitAnswer(resp *kmsg.OffsetCommitResponse, commits []history.Commit) (outcome, int16, error) {
	answered := 0
	ok, refused := 0, 0
	var code int16
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if !containsCommit(commits, history.TopicPartition{Topic: t.Topic, Partition: p.Partition}) {
				continue
			}
			answered++
			o := commitOutcome(p.ErrorCode)
			switch {
			case o == written:
				ok++
			case !o.mayBeWritten():
				refused++
			}
			if code == 0 {
				code = p.ErrorCode
			}
		}
	}
	switch {
	case answered != len(commits):
		return unknownFatal, code, fmt.Errorf("%w: OffsetCommit answered %d of %d partitions", ErrProtocol, answered, len(commits))
	case ok == len(commits):
		return written, 0, nil
	case refused == len(commits):
		return notWrittenRetriable, code, kerr.ErrorForCode(code)
	}
	return unknownRetriable, code, kerr.ErrorForCode(code)
}

func containsCommit(commits []history.Commit, tp history.TopicPartition) bool {
	for _, c := range commits {
		if c.Partition == tp {
			return true
		}
	}
	return false
}

// fetchCommitted reads the group's committed offsets of the assigned
// partitions and records it as a fetch-committed op. The first read of a
// generation sets the positions: the committed offset, or the earliest
// offset where there is none.
func (g *GroupConsumer) fetchCommitted() {
	m := &g.membership
	var asked []history.Commit
	req := kmsg.NewPtrOffsetFetchRequest()
	group := kmsg.NewOffsetFetchRequestGroup()
	group.Group = g.config.Group
	for _, tp := range m.assigned {
		asked = append(asked, history.Commit{Group: g.config.Group, Partition: tp, Offset: history.OffsetUnknown})
		if n := len(group.Topics); n == 0 || group.Topics[n-1].Topic != tp.Topic {
			topic := kmsg.NewOffsetFetchRequestGroupTopic()
			topic.Topic = tp.Topic
			group.Topics = append(group.Topics, topic)
		}
		topic := &group.Topics[len(group.Topics)-1]
		topic.Partitions = append(topic.Partitions, tp.Partition)
	}
	req.Groups = append(req.Groups, group)
	op := g.invoke(history.FuncFetchCommitted, history.Payload{Commits: asked})
	g.op = op
	g.stats.FetchCommitted++
	g.busy = true
	g.client.RequestAddress(m.coordinator, req, func(resp kmsg.Response, err error) {
		g.busy, g.op = false, nil
		var read []history.Commit
		code := int16(0)
		if err == nil {
			read, code, err = readOffsetFetchAnswer(resp.(*kmsg.OffsetFetchResponse), asked)
		}
		if err != nil {
			// A read that failed changed nothing.
			g.stats.Errors++
			op.Fail(err.Error())
			if code == 0 || coordinatorMoved(code) {
				g.coordinatorLost(err)
			}
			g.backOff()
			return
		}
		op.OK(history.Payload{Commits: read})
		for _, commit := range read {
			p := m.positions[commit.Partition]
			p.committed = commit.Offset
			if !p.placed {
				p.offset = commit.Offset // OffsetUnknown when none: the earliest, next
				p.placed = true
			}
		}
		m.committedKnown, m.verifyPending = true, false
		waiting := g.readBack
		g.readBack = nil
		for _, done := range waiting {
			done(read)
		}
		g.schedule(0)
	})
}

// readOffsetFetchAnswer reads an OffsetFetch answer for the partitions
// asked: their committed offsets in the order asked, or the error (and its
// code) that stopped the read.
func readOffsetFetchAnswer(resp *kmsg.OffsetFetchResponse, asked []history.Commit) ([]history.Commit, int16, error) {
	if len(resp.Groups) != 1 {
		return nil, 0, fmt.Errorf("%w: OffsetFetch answered %d groups for one", ErrProtocol, len(resp.Groups))
	}
	group := resp.Groups[0]
	if group.ErrorCode != 0 {
		return nil, group.ErrorCode, kerr.ErrorForCode(group.ErrorCode)
	}
	read := make([]history.Commit, 0, len(asked))
	for _, want := range asked {
		p := findOffsetFetchPartition(group, want.Partition)
		switch {
		case p == nil:
			return nil, 0, fmt.Errorf("%w: OffsetFetch answer leaves out %s", ErrProtocol, want.Partition)
		case p.ErrorCode != 0:
			return nil, p.ErrorCode, kerr.ErrorForCode(p.ErrorCode)
		case p.Offset < history.OffsetUnknown:
			return nil, 0, fmt.Errorf("%w: OffsetFetch answered offset %d for %s", ErrProtocol, p.Offset, want.Partition)
		}
		read = append(read, history.Commit{Group: want.Group, Partition: want.Partition, Offset: p.Offset})
	}
	return read, 0, nil
}

func findOffsetFetchPartition(group kmsg.OffsetFetchResponseGroup, tp history.TopicPartition) *kmsg.OffsetFetchResponseGroupTopicPartition {
	for ti := range group.Topics {
		t := &group.Topics[ti]
		if t.Topic != tp.Topic {
			continue
		}
		for pi := range t.Partitions {
			if t.Partitions[pi].Partition == tp.Partition {
				return &t.Partitions[pi]
			}
		}
	}
	return nil
}
