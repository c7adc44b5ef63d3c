package group

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
)

// DeleteGroups handles a DeleteGroups request (versions 0-2): each group
// without members is deleted — its metadata and every offset it committed
// are tombstoned in the log — and answered once the tombstones commit.
// GROUP_ID_NOT_FOUND for a group that does not exist, NON_EMPTY_GROUP for
// one with members. A group named twice is answered once, as Kafka does.
func (c *Coordinator) DeleteGroups(req *kmsg.DeleteGroupsRequest, done func(*kmsg.DeleteGroupsResponse)) {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	seen := map[string]bool{}
	for _, id := range req.Groups {
		if !seen[id] {
			seen[id] = true
			answer := kmsg.NewDeleteGroupsResponseGroup()
			answer.Group = id
			resp.Groups = append(resp.Groups, answer)
		}
	}
	// The request is answered when the last deletion has its outcome;
	// launching counts as one outcome, so that deletions finishing at
	// once cannot answer before every group is looked at.
	waiting := 1
	finishOne := func() {
		waiting--
		if waiting == 0 {
			done(resp)
		}
	}
	for i := range resp.Groups {
		answer := &resp.Groups[i]
		p, err := c.serving(answer.Group)
		if err != nil {
			answer.ErrorCode = kafkaCode(err)
			continue
		}
		g := p.groups[answer.Group]
		switch {
		case g == nil || g.is(stateDead):
			answer.ErrorCode = kerr.GroupIDNotFound.Code
		case !g.is(stateEmpty):
			answer.ErrorCode = kerr.NonEmptyGroup.Code
		default:
			waiting++
			c.deleteGroup(g, func(err error) {
				answer.ErrorCode = kafkaCode(err)
				finishOne()
			})
		}
	}
	finishOne()
}

// deleteGroup deletes an empty group: it is Dead at once (nobody may join
// or commit meanwhile), and removed when the tombstones of its metadata
// and of every offset it has or is committing commit. If they cannot be
// written, it is Empty again. answer runs once, with the outcome or at
// the commit timeout.
func (c *Coordinator) deleteGroup(g *group, answer func(err error)) {
	if !g.is(stateEmpty) {
		panic("group: deleting " + g.id + " in state " + g.state.String())
	}
	g.transition(stateDead, c.now())
	c.stopGroupTimers(g)
	records := c.offsetTombstones(g, nil)
	records = append(records, groupTombstone(g.id))
	answered := false
	finish := func(err error) {
		if !answered {
			answered = true
			answer(commitError(err))
		}
	}
	c.write(g.partition, records, func(err error) {
		switch {
		case err == nil:
			c.removeGroup(g)
		case !g.partition.unloaded && g.partition.groups[g.id] == g:
			g.undoDeletion(c.now())
		}
		finish(err)
	}, func() { finish(kerr.RequestTimedOut) })
}

// undoDeletion brings back a group whose deletion could not be written.
// The protocol has no Dead → Empty move; this is not one, but the undoing
// of a deletion that never happened, and the group was Empty before it.
func (g *group) undoDeletion(now int64) {
	if !g.is(stateDead) {
		panic("group: undoing the deletion of " + g.id + " in state " + g.state.String())
	}
	g.state = stateEmpty
	g.stateTimestamp = now
}

// offsetTombstones are the records that delete the group's offsets for
// the partitions in only (all when nil) that it has committed or is
// committing, sorted.
func (c *Coordinator) offsetTombstones(g *group, only map[topicPartition]bool) []batch.Record {
	doomed := map[topicPartition]bool{}
	for tp := range g.offsets { // order-independent: builds a set
		doomed[tp] = true
	}
	for tp := range g.pendingCommits { // order-independent: builds a set
		doomed[tp] = true
	}
	var records []batch.Record
	for _, tp := range sortedPartitions(doomed) {
		if only == nil || only[tp] {
			records = append(records, offsetRecord(g.id, tp, nil))
		}
	}
	return records
}

// OffsetDelete handles an OffsetDelete request (version 0, KIP-496): the
// group's committed offsets of the partitions named are deleted, answered
// once the tombstones commit. A partition the cluster does not have is
// refused with UNKNOWN_TOPIC_OR_PARTITION; a group with members keeps the
// offsets of topics its consumers subscribe to (GROUP_SUBSCRIBED_TO_TOPIC);
// a non-consumer group with members refuses (NON_EMPTY_GROUP).
func (c *Coordinator) OffsetDelete(req *kmsg.OffsetDeleteRequest, done func(*kmsg.OffsetDeleteResponse)) {
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	g, err := c.offsetDeleteGroup(req.Group)
	if err != nil {
		resp.ErrorCode = kafkaCode(err)
		done(resp)
		return
	}
	var eligible []*kmsg.OffsetDeleteResponseTopicPartition
	doomed := map[topicPartition]bool{}
	for _, rt := range req.Topics {
		answerTopic := kmsg.NewOffsetDeleteResponseTopic()
		answerTopic.Topic = rt.Topic
		for _, rp := range rt.Partitions {
			answer := kmsg.NewOffsetDeleteResponseTopicPartition()
			answer.Partition = rp.Partition
			answerTopic.Partitions = append(answerTopic.Partitions, answer)
		}
		resp.Topics = append(resp.Topics, answerTopic)
	}
	for ti, rt := range req.Topics {
		consumed := !g.is(stateEmpty) && g.isSubscribedToTopic(rt.Topic)
		for pi, rp := range rt.Partitions {
			answer := &resp.Topics[ti].Partitions[pi]
			if !c.partitionExists(rt.Topic, rp.Partition) {
				// As Kafka's broker does before the coordinator sees the
				// request (and as OffsetCommit does here).
				answer.ErrorCode = kerr.UnknownTopicOrPartition.Code
				continue
			}
			if consumed {
				answer.ErrorCode = kerr.GroupSubscribedToTopic.Code
				continue
			}
			eligible = append(eligible, answer)
			doomed[topicPartition{topic: rt.Topic, partition: rp.Partition}] = true
		}
	}
	answered := false
	finish := func(err error) {
		if answered {
			return
		}
		answered = true
		for _, answer := range eligible {
			answer.ErrorCode = kafkaCode(commitError(err))
		}
		done(resp)
	}
	if !c.deleteOffsets(g, doomed, finish, func() { finish(kerr.RequestTimedOut) }) {
		done(resp)
	}
}

// deleteOffsets writes the tombstones of the group's offsets of the
// partitions in doomed, committed or being committed, and forgets them
// once the tombstones commit; committed gets the outcome, timedOut runs at
// the commit timeout. It reports false, writing nothing, when the group
// has no offset there.
func (c *Coordinator) deleteOffsets(g *group, doomed map[topicPartition]bool, committed func(err error), timedOut func()) bool {
	records := c.offsetTombstones(g, doomed)
	if len(records) == 0 {
		return false
	}
	c.write(g.partition, records, func(err error) {
		if err == nil && !g.partition.unloaded && g.partition.groups[g.id] == g {
			for tp := range doomed { // order-independent: deletes from a map
				delete(g.offsets, tp)
			}
		}
		committed(err)
	}, timedOut)
	return true
}

// offsetDeleteGroup finds the group whose offsets an OffsetDelete may
// delete, or the error for the whole request.
func (c *Coordinator) offsetDeleteGroup(groupID string) (*group, error) {
	if groupID == "" {
		return nil, kerr.InvalidGroupID
	}
	p, err := c.serving(groupID)
	if err != nil {
		return nil, err
	}
	g := p.groups[groupID]
	switch {
	case g == nil || g.is(stateDead):
		return nil, kerr.GroupIDNotFound
	case !g.is(stateEmpty) && g.protocolType != consumerProtocolType:
		return nil, kerr.NonEmptyGroup
	}
	return g, nil
}

// TopicDeleted deletes every loaded group's committed offsets of a deleted
// topic, as Kafka's coordinator does (onPartitionsDeleted): a topic created
// again under the name is a new topic, with new logs, and a group that
// resumed it from the deleted topic's offsets would skip its first records.
// The tombstones are written as OffsetDelete writes them, without an
// answer to wait for; a write that fails leaves the offsets, as does a
// partition still loading when the deletion is applied (in Kafka too).
func (c *Coordinator) TopicDeleted(topic string) {
	for _, index := range sortedKeys(c.partitions) {
		p := c.partitions[index]
		if p.loading() || p.unloaded {
			continue
		}
		for _, id := range sortedKeys(p.groups) {
			g := p.groups[id]
			doomed := map[topicPartition]bool{}
			for tp := range g.offsets { // order-independent: builds a set
				if tp.topic == topic {
					doomed[tp] = true
				}
			}
			for tp := range g.pendingCommits { // order-independent: builds a set
				if tp.topic == topic {
					doomed[tp] = true
				}
			}
			if c.deleteOffsets(g, doomed, func(error) {}, func() {}) {
				c.logger.Info("deleting the committed offsets of a deleted topic", "group", g.id, "topic", topic, "partitions", len(doomed))
			}
		}
	}
}
