package group

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetFetch handles an OffsetFetch request (versions 1-8): the committed
// offset of each partition asked for (offset -1 and empty metadata when
// there is none), or, with no topics named (v2+), every offset the group
// committed. Only committed offsets are answered, never a commit still on
// its way to the log. v5 adds the leader epoch of each offset; v8 asks for
// several groups at once, each with its own error. Errors for the whole
// group are per partition in v1, for the request in v2-v7.
// RequireStable (v7) concerns transactional commits, which do not exist
// here, so every offset is stable.
func (c *Coordinator) OffsetFetch(req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version >= 8 {
		for _, rg := range req.Groups {
			answer := kmsg.NewOffsetFetchResponseGroup()
			answer.Group = rg.Group
			var wanted []wantedTopic
			if rg.Topics != nil {
				wanted = make([]wantedTopic, 0, len(rg.Topics))
				for _, t := range rg.Topics {
					wanted = append(wanted, wantedTopic{topic: t.Topic, partitions: t.Partitions})
				}
			}
			fetched, err := c.fetchOffsets(rg.Group, wanted)
			answer.ErrorCode = kafkaCode(err)
			for _, t := range fetched {
				answerTopic := kmsg.NewOffsetFetchResponseGroupTopic()
				answerTopic.Topic = t.topic
				for _, p := range t.partitions {
					answerPartition := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					answerPartition.Partition = p.partition
					answerPartition.Offset = p.offset.offset
					answerPartition.LeaderEpoch = p.offset.leaderEpoch
					answerPartition.Metadata = cloneString(&p.offset.metadata)
					answerTopic.Partitions = append(answerTopic.Partitions, answerPartition)
				}
				answer.Topics = append(answer.Topics, answerTopic)
			}
			resp.Groups = append(resp.Groups, answer)
		}
		return resp
	}

	var wanted []wantedTopic
	if req.Topics != nil || req.Version < 2 {
		wanted = make([]wantedTopic, 0, len(req.Topics))
		for _, t := range req.Topics {
			wanted = append(wanted, wantedTopic{topic: t.Topic, partitions: t.Partitions})
		}
	}
	fetched, err := c.fetchOffsets(req.Group, wanted)
	if err != nil && req.Version < 2 {
		// v1 has no field for a group error: every partition carries it.
		fetched = fetchedNothing(wanted)
		for _, t := range fetched {
			for i := range t.partitions {
				t.partitions[i].err = err
			}
		}
	} else if err != nil {
		resp.ErrorCode = kafkaCode(err)
	}
	for _, t := range fetched {
		answerTopic := kmsg.NewOffsetFetchResponseTopic()
		answerTopic.Topic = t.topic
		for _, p := range t.partitions {
			answerPartition := kmsg.NewOffsetFetchResponseTopicPartition()
			answerPartition.Partition = p.partition
			answerPartition.Offset = p.offset.offset
			answerPartition.LeaderEpoch = p.offset.leaderEpoch
			answerPartition.Metadata = cloneString(&p.offset.metadata)
			answerPartition.ErrorCode = kafkaCode(p.err)
			answerTopic.Partitions = append(answerTopic.Partitions, answerPartition)
		}
		resp.Topics = append(resp.Topics, answerTopic)
	}
	return resp
}

// wantedTopic is a topic and partitions an OffsetFetch asks about.
type wantedTopic struct {
	topic      string
	partitions []int32
}

// fetchedTopic is one topic of an OffsetFetch answer.
type fetchedTopic struct {
	topic      string
	partitions []fetchedPartition
}

type fetchedPartition struct {
	partition int32
	offset    committedOffset
	err       error
}

// noOffset is what a partition without a committed offset answers.
var noOffset = committedOffset{offset: -1, leaderEpoch: -1}

// fetchOffsets returns the group's committed offsets for wanted, in the
// order asked, or all of them (sorted) when wanted is nil; or the error
// that stops this node from answering for the group.
func (c *Coordinator) fetchOffsets(groupID string, wanted []wantedTopic) ([]fetchedTopic, error) {
	p, err := c.serving(groupID)
	if err != nil {
		return nil, err
	}
	g := p.groups[groupID]
	if wanted == nil {
		if g == nil {
			return nil, nil
		}
		var all []fetchedTopic
		for _, tp := range sortedPartitions(g.offsets) {
			if len(all) == 0 || all[len(all)-1].topic != tp.topic {
				all = append(all, fetchedTopic{topic: tp.topic})
			}
			last := &all[len(all)-1]
			last.partitions = append(last.partitions, fetchedPartition{partition: tp.partition, offset: g.offsets[tp]})
		}
		return all, nil
	}
	fetched := fetchedNothing(wanted)
	if g == nil {
		return fetched, nil
	}
	for ti := range fetched {
		for pi := range fetched[ti].partitions {
			tp := topicPartition{topic: fetched[ti].topic, partition: fetched[ti].partitions[pi].partition}
			if offset, ok := g.offsets[tp]; ok {
				fetched[ti].partitions[pi].offset = offset
			}
		}
	}
	return fetched, nil
}

// fetchedNothing answers every wanted partition with no offset.
func fetchedNothing(wanted []wantedTopic) []fetchedTopic {
	fetched := make([]fetchedTopic, 0, len(wanted))
	for _, t := range wanted {
		topic := fetchedTopic{topic: t.topic, partitions: make([]fetchedPartition, 0, len(t.partitions))}
		for _, partition := range t.partitions {
			topic.partitions = append(topic.partitions, fetchedPartition{partition: partition, offset: noOffset})
		}
		fetched = append(fetched, topic)
	}
	return fetched
}
