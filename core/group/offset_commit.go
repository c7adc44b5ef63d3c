package group

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
)

// OffsetCommit handles an OffsetCommit request (versions 2-8), answering
// through done once the commit is durable: its records committed in the
// offsets partition (acks=all), or REQUEST_TIMED_OUT after
// offsets.commit.timeout.ms (the commit may still land later). OffsetFetch
// sees a commit only once it is committed.
//
// A member of a group commits with its member id and generation, which
// must be current (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
// FENCED_INSTANCE_ID otherwise, and REBALANCE_IN_PROGRESS while the group
// waits for its assignment). A client that does not use group membership
// commits with generation -1 and no member id, which is allowed only while
// the group has no members (or does not exist yet: it is then created).
// Per partition: UNKNOWN_TOPIC_OR_PARTITION for partitions the cluster
// does not have, OFFSET_METADATA_TOO_LARGE for metadata over
// offset.metadata.max.bytes. v2-v4's retention time is ignored:
// offsets.retention.minutes applies, as in Kafka since 2.1.
func (c *Coordinator) OffsetCommit(req *kmsg.OffsetCommitRequest, done func(*kmsg.OffsetCommitResponse)) {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	// Every slice is made at its size, and the pending commits in one
	// array: a consumer commits every few hundred milliseconds.
	partitions := 0
	if len(req.Topics) > 0 {
		resp.Topics = make([]kmsg.OffsetCommitResponseTopic, 0, len(req.Topics))
	}
	for _, rt := range req.Topics {
		answerTopic := kmsg.NewOffsetCommitResponseTopic()
		answerTopic.Topic = rt.Topic
		if len(rt.Partitions) > 0 {
			answerTopic.Partitions = make([]kmsg.OffsetCommitResponseTopicPartition, 0, len(rt.Partitions))
		}
		for _, rp := range rt.Partitions {
			answer := kmsg.NewOffsetCommitResponseTopicPartition()
			answer.Partition = rp.Partition
			answerTopic.Partitions = append(answerTopic.Partitions, answer)
		}
		resp.Topics = append(resp.Topics, answerTopic)
		partitions += len(rt.Partitions)
	}
	pending := make([]pendingCommit, 0, partitions)
	commits := make([]*pendingCommit, 0, partitions)
	for ti, rt := range req.Topics {
		for pi := range rt.Partitions {
			pending = append(pending, pendingCommit{
				tp:      topicPartition{topic: rt.Topic, partition: rt.Partitions[pi].Partition},
				request: &req.Topics[ti].Partitions[pi],
				answer:  &resp.Topics[ti].Partitions[pi],
			})
			commits = append(commits, &pending[len(pending)-1])
		}
	}
	if len(commits) > offsetsPerCommitMax {
		setCommitErrors(commits, kerr.InvalidCommitOffsetSize)
		done(resp)
		return
	}
	// As Kafka's broker does before the coordinator sees the request:
	// partitions that do not exist are refused one by one.
	valid := make([]*pendingCommit, 0, len(commits))
	for _, commit := range commits {
		if c.partitionExists(commit.tp.topic, commit.tp.partition) {
			valid = append(valid, commit)
		} else {
			commit.answer.ErrorCode = kerr.UnknownTopicOrPartition.Code
		}
	}
	if len(valid) == 0 {
		done(resp)
		return
	}
	if err := c.admitCommit(req, valid, func() { done(resp) }); err != nil {
		setCommitErrors(valid, err)
		done(resp)
	}
}

// pendingCommit is one partition of an OffsetCommit.
type pendingCommit struct {
	tp      topicPartition
	request *kmsg.OffsetCommitRequestTopicPartition
	answer  *kmsg.OffsetCommitResponseTopicPartition
	offset  committedOffset
}

func setCommitErrors(commits []*pendingCommit, err error) {
	for _, commit := range commits {
		commit.answer.ErrorCode = kafkaCode(err)
	}
}

// admitCommit validates the commit against its group and, if it passes,
// stores it; answer runs once the stored partitions have their outcome.
// An error means the whole commit is refused.
func (c *Coordinator) admitCommit(req *kmsg.OffsetCommitRequest, commits []*pendingCommit, answer func()) error {
	p, err := c.serving(req.Group)
	if err != nil {
		return err
	}
	g := p.groups[req.Group]
	if g == nil {
		if req.Generation >= 0 {
			// A generation of a group that does not exist: a member
			// of an older life of the group (GROUP_ID_NOT_FOUND
			// from v9 on).
			return kerr.IllegalGeneration
		}
		if g, err = c.createGroup(p, req.Group); err != nil {
			return err
		}
	}
	if err := c.validateOffsetCommit(g, req.Generation, req.MemberID, req.InstanceID); err != nil {
		return err
	}
	switch g.state {
	case stateCompletingRebalance:
		// The member has its new generation but not yet its
		// assignment; it should not be committing. Let it finish
		// the rebalance.
		return kerr.RebalanceInProgress
	case stateStable, statePreparingRebalance:
		// Committing while a rebalance is prepared is allowed: the
		// member learns of the rebalance from its next heartbeat,
		// and committing first is what it should do.
		if m := g.byID[req.MemberID]; m != nil {
			c.scheduleSession(g, m, c.sessionCheckTimeout(m))
		}
	}
	c.storeOffsets(g, req.Version, commits, answer)
	return nil
}

// validateOffsetCommit applies Kafka's rules (ClassicGroup
// validateOffsetCommit) for who may commit to g.
func (c *Coordinator) validateOffsetCommit(g *group, generation int32, memberID string, instanceID *string) error {
	switch {
	case g.is(stateDead):
		return kerr.CoordinatorNotAvailable
	case generation < 0 && g.is(stateEmpty):
		// A client without group membership (or an administrator):
		// allowed while nobody is a member.
		return nil
	case generation >= 0 && generation < g.generation && c.canaryOn(CanaryStaleGenerationCommit):
		return nil // planted bug: a zombie from an older generation commits
	case generation >= 0 || memberID != "" || instanceID != nil:
		if err := validateCurrentMember(g, memberID, instanceID); err != nil {
			return err
		}
		if generation != g.generation {
			return kerr.IllegalGeneration
		}
		return nil
	case !g.is(stateEmpty):
		// Without membership, while the group has members: only
		// they may commit.
		return kerr.UnknownMemberID
	}
	return nil
}

// storeOffsets writes the offsets as one batch and applies them to memory
// when it commits, in log order; answer runs then (or at the timeout).
func (c *Coordinator) storeOffsets(g *group, version int16, commits []*pendingCommit, answer func()) {
	now := c.now()
	stored := make([]*pendingCommit, 0, len(commits))
	records := make([]batch.Record, 0, len(commits))
	for _, commit := range commits {
		metadata := ""
		if commit.request.Metadata != nil {
			metadata = *commit.request.Metadata
		}
		if len(metadata) > c.config.OffsetMetadataMaxBytes {
			commit.answer.ErrorCode = kerr.OffsetMetadataTooLarge.Code
			continue
		}
		leaderEpoch := int32(-1)
		if version >= 6 {
			leaderEpoch = commit.request.LeaderEpoch
		}
		commit.offset = committedOffset{
			offset: commit.request.Offset, leaderEpoch: leaderEpoch,
			metadata: metadata, commitTimestamp: now,
		}
		stored = append(stored, commit)
		records = append(records, offsetRecord(g.id, commit.tp, &commit.offset))
	}
	if len(stored) == 0 {
		answer()
		return
	}
	for _, commit := range stored {
		g.pendingCommits[commit.tp]++
	}
	s := &offsetStore{g: g, stored: stored, answer: answer}
	appended := c.write(g.partition, records, s.committed, s.timedOut)
	if appended && c.canaryOn(CanaryCommitBeforeDurable) {
		s.appliedEarly = true
		s.apply() // planted bug: acknowledged before it is durable
		s.finish(nil)
	}
}

// offsetStore is one storeOffsets write waiting for its outcome. (One
// struct rather than closures over its flags: a consumer commits every
// few hundred milliseconds.)
type offsetStore struct {
	g      *group
	stored []*pendingCommit
	answer func()
	// answered is set once the client has its answer; appliedEarly by
	// the planted bug that applies before the write is durable.
	answered, appliedEarly bool
}

// committed is the write's outcome.
func (s *offsetStore) committed(err error) {
	g := s.g
	for _, commit := range s.stored {
		g.pendingCommits[commit.tp]--
		if g.pendingCommits[commit.tp] == 0 {
			delete(g.pendingCommits, commit.tp)
		}
	}
	// A group being deleted is still in its partition until its
	// tombstones commit, which follow this record in the log:
	// apply, and the tombstones remove it.
	if err == nil && !s.appliedEarly && !g.partition.unloaded && g.partition.groups[g.id] == g {
		s.apply()
	}
	s.finish(err)
}

// timedOut answers the client before the outcome is known.
func (s *offsetStore) timedOut() { s.finish(kerr.RequestTimedOut) }

// finish answers the client, once.
func (s *offsetStore) finish(err error) {
	if s.answered {
		return
	}
	s.answered = true
	setCommitErrors(s.stored, commitError(err))
	s.answer()
}

// apply makes the offsets visible to OffsetFetch.
func (s *offsetStore) apply() {
	for _, commit := range s.stored {
		s.g.offsets[commit.tp] = commit.offset
	}
}
