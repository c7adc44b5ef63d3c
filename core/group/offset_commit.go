package group

import (
	"math"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
	"sluice/core/wire"
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
// offset.metadata.max.bytes. A v2-v4 commit's retention time, unless -1,
// sets when its offsets expire in place of offsets.retention.minutes, as
// Kafka still honours it (the offset's expire timestamp, kept in the
// record's value version 1); v5 dropped the field.
func (c *Coordinator) OffsetCommit(req *kmsg.OffsetCommitRequest, done wire.Responder) {
	oc := &offsetCommit{c: c, request: req, done: done}
	resp := &oc.response // as req.ResponseKind() makes it
	*resp = kmsg.NewOffsetCommitResponse()
	resp.Version = req.Version
	partitions := 0
	for _, rt := range req.Topics {
		partitions += len(rt.Partitions)
	}
	if len(req.Topics) > 0 {
		resp.Topics = room(oc.topicsInline[:], len(req.Topics))
	}
	// Every topic's answers in one array, and a pendingCommit for each.
	answers := room(oc.answersInline[:], partitions)
	oc.commits = room(oc.commitsInline[:], partitions)
	commit := 0
	for ti := range req.Topics {
		rt := &req.Topics[ti]
		answerTopic := &resp.Topics[ti]
		*answerTopic = kmsg.NewOffsetCommitResponseTopic()
		answerTopic.Topic = rt.Topic
		if n := len(rt.Partitions); n > 0 {
			answerTopic.Partitions, answers = answers[:n:n], answers[n:]
		}
		for pi := range rt.Partitions {
			answer := &answerTopic.Partitions[pi]
			*answer = kmsg.NewOffsetCommitResponseTopicPartition()
			answer.Partition = rt.Partitions[pi].Partition
			oc.commits[commit] = pendingCommit{
				tp:      topicPartition{topic: rt.Topic, partition: rt.Partitions[pi].Partition},
				request: &rt.Partitions[pi],
				answer:  answer,
			}
			commit++
		}
	}
	if len(oc.commits) > offsetsPerCommitMax {
		oc.setErrors(kerr.InvalidCommitOffsetSize)
		oc.respond()
		return
	}
	// As Kafka's broker does before the coordinator sees the request:
	// partitions that do not exist are refused one by one.
	valid := 0
	for i := range oc.commits {
		commit := &oc.commits[i]
		if c.partitionExists(commit.tp.topic, commit.tp.partition) {
			valid++
		} else {
			commit.answer.ErrorCode = kerr.UnknownTopicOrPartition.Code
			commit.refused = true
		}
	}
	if valid == 0 {
		oc.respond()
		return
	}
	if err := c.admitCommit(oc); err != nil {
		oc.setErrors(err)
		oc.respond()
	}
}

// offsetCommit is one OffsetCommit being handled: its answer, a
// pendingCommit for each partition, and once stored its write and the
// outcome's flags, in one allocation with room for a commit of a few
// partitions of one topic (a consumer commits its assignment every few
// hundred milliseconds), where the steps of a commit each made their own.
type offsetCommit struct {
	c        *Coordinator
	request  *kmsg.OffsetCommitRequest
	done     wire.Responder
	response kmsg.OffsetCommitResponse
	// commits are the request's partitions, in request order; those
	// refused have their answer already, the others are answered by
	// the outcome of the write (stored) or the commit's refusal.
	commits []pendingCommit

	// Once stored: the group written to and the write; answered is set
	// once the client has its answer, appliedEarly by the planted bug
	// that applies before the write is durable.
	g                      *group
	write                  pendingWrite
	answered, appliedEarly bool

	topicsInline  [1]kmsg.OffsetCommitResponseTopic
	answersInline [offsetCommitPartitionsInline]kmsg.OffsetCommitResponseTopicPartition
	commitsInline [offsetCommitPartitionsInline]pendingCommit
	recordsInline [offsetCommitPartitionsInline]batch.Record
}

// offsetCommitPartitionsInline is how many partitions an offsetCommit
// has room for in its own allocation.
const offsetCommitPartitionsInline = 4

// room returns inline[:n] when n fits, a new array otherwise.
func room[T any](inline []T, n int) []T {
	if n <= len(inline) {
		return inline[:n:n]
	}
	return make([]T, n)
}

// pendingCommit is one partition of an OffsetCommit.
type pendingCommit struct {
	tp      topicPartition
	request *kmsg.OffsetCommitRequestTopicPartition
	answer  *kmsg.OffsetCommitResponseTopicPartition
	offset  committedOffset
	// refused is set once the partition has its own answer (unknown,
	// metadata too large): the commit's outcome is not its.
	refused bool
}

// setErrors answers every partition not refused with err.
func (oc *offsetCommit) setErrors(err error) {
	for i := range oc.commits {
		if commit := &oc.commits[i]; !commit.refused {
			commit.answer.ErrorCode = kafkaCode(err)
		}
	}
}

// respond sends the answer.
func (oc *offsetCommit) respond() { oc.done.Respond(&oc.response) }

// admitCommit validates the commit against its group and, if it passes,
// stores it; it is answered once the stored partitions have their
// outcome. An error means the whole commit is refused.
func (c *Coordinator) admitCommit(oc *offsetCommit) error {
	req := oc.request
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
	c.storeOffsets(g, oc)
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
// when it commits, in log order; the commit is answered then (or at the
// timeout).
func (c *Coordinator) storeOffsets(g *group, oc *offsetCommit) {
	now := c.now()
	records := oc.recordsInline[:0]
	for i := range oc.commits {
		commit := &oc.commits[i]
		if commit.refused {
			continue
		}
		metadata := ""
		if commit.request.Metadata != nil {
			metadata = *commit.request.Metadata
		}
		if javaLength(metadata) > c.config.OffsetMetadataMaxBytes {
			commit.answer.ErrorCode = kerr.OffsetMetadataTooLarge.Code
			commit.refused = true
			continue
		}
		leaderEpoch := int32(-1)
		if oc.request.Version >= 6 {
			leaderEpoch = commit.request.LeaderEpoch
		}
		commit.offset = committedOffset{
			offset: commit.request.Offset, leaderEpoch: leaderEpoch,
			metadata: metadata, commitTimestamp: now,
			expireTimestamp: expireAt(oc.request, now),
		}
		records = append(records, offsetRecord(g.id, commit.tp, &commit.offset))
	}
	if len(records) == 0 {
		oc.respond()
		return
	}
	for i := range oc.commits {
		if commit := &oc.commits[i]; !commit.refused {
			g.pendingCommits[commit.tp]++
		}
	}
	oc.g = g
	oc.write.waiter = oc
	appended := c.startWrite(g.partition, records, &oc.write)
	if appended && c.canaryOn(CanaryCommitBeforeDurable) {
		oc.appliedEarly = true
		oc.apply() // planted bug: acknowledged before it is durable
		oc.finish(nil)
	}
}

// committed is the write's outcome (writeWaiter).
func (oc *offsetCommit) committed(err error) {
	g := oc.g
	for i := range oc.commits {
		commit := &oc.commits[i]
		if commit.refused {
			continue
		}
		g.pendingCommits[commit.tp]--
		if g.pendingCommits[commit.tp] == 0 {
			delete(g.pendingCommits, commit.tp)
		}
	}
	// A group being deleted is still in its partition until its
	// tombstones commit, which follow this record in the log:
	// apply, and the tombstones remove it.
	if err == nil && !oc.appliedEarly && !g.partition.unloaded && g.partition.groups[g.id] == g {
		oc.apply()
	}
	oc.finish(err)
}

// timedOut answers the client before the outcome is known (writeWaiter).
func (oc *offsetCommit) timedOut() { oc.finish(kerr.RequestTimedOut) }

// finish answers the client, once.
func (oc *offsetCommit) finish(err error) {
	if oc.answered {
		return
	}
	oc.answered = true
	oc.setErrors(commitError(err))
	oc.respond()
}

// apply makes the offsets visible to OffsetFetch.
func (oc *offsetCommit) apply() {
	for i := range oc.commits {
		if commit := &oc.commits[i]; !commit.refused {
			oc.g.offsets[commit.tp] = commit.offset
		}
	}
}

// javaLength is a string's length as Kafka measures offset metadata against
// offset.metadata.max.bytes: Java's String.length, in UTF-16 code units (a
// rune beyond the Basic Multilingual Plane counts two; a byte that is not
// UTF-8, decoded as U+FFFD, one), not in bytes.
func javaLength(s string) int {
	n := 0
	for _, r := range s {
		if r > 0xFFFF {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// expireAt is when a commit's offsets expire by its own retention time:
// now plus v2-v4's RetentionTimeMillis, 0 (none) when the request has no
// such field or leaves it at -1, Kafka's "use the broker's retention".
// Never 0 otherwise, and saturated rather than overflowed.
func expireAt(req *kmsg.OffsetCommitRequest, now int64) int64 {
	retention := req.RetentionTimeMillis
	if req.Version < 2 || req.Version > 4 || retention == -1 {
		return 0
	}
	switch {
	case retention > 0 && now > math.MaxInt64-retention:
		return math.MaxInt64
	case now+retention < 1:
		return 1
	}
	return now + retention
}
