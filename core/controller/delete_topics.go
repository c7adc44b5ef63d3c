package controller

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

// DeleteTopics answers DeleteTopics (versions 1-6 semantics). Topics are
// named by TopicNames (v0-5) or by Topics (v6), each entry by name or by
// id; each entry gets an answer, in request order, names first:
//
//   - both a name and an id, or neither: INVALID_REQUEST;
//   - a name or id given twice, or a name and an id of the same topic:
//     INVALID_REQUEST;
//   - an unknown name: UNKNOWN_TOPIC_OR_PARTITION; an unknown id:
//     UNKNOWN_TOPIC_ID.
//
// Internal topics such as __consumer_offsets may be deleted: Kafka's
// controller allows it (only the kafka-topics tool refuses, on the client
// side). The metadata log is not a topic, so its name is simply unknown.
//
// Every topic that passes is removed by one proposal of RemoveTopicRecords;
// each broker then closes the topic's partitions and deletes their data.
func (c *Controller) DeleteTopics(req *kmsg.DeleteTopicsRequest, done func(*kmsg.DeleteTopicsResponse)) {
	entries := deleteTopicsEntries(req)
	c.submitAdmin(func() ([]metadata.Record, func(*failure)) {
		c.planTopicDeletions(entries)
		var records []metadata.Record
		for _, e := range entries {
			if e.failure == nil {
				records = append(records, metadata.Record{RemoveTopic: &metadata.RemoveTopicRecord{TopicID: e.id}})
			}
		}
		if len(records) > recordsPerOperationMax {
			tooBig := fail(kerr.InvalidRequest, "the request deletes %d topics, more than %d at once", len(records), recordsPerOperationMax)
			for _, e := range entries {
				if e.failure == nil {
					e.failure = tooBig
				}
			}
			records = nil
		}
		return records, func(outcome *failure) { done(deleteTopicsAnswer(req, entries, outcome)) }
	}, func(f *failure) {
		for _, e := range entries {
			e.failure = f
		}
		done(deleteTopicsAnswer(req, entries, nil))
	})
}

// topicDeletion is one entry of a DeleteTopics request and its outcome.
type topicDeletion struct {
	name    string // given, or found from the id
	named   bool   // the entry gave a name
	id      metadata.TopicID
	failure *failure
}

// deleteTopicsEntries lists what the request names, in answer order.
func deleteTopicsEntries(req *kmsg.DeleteTopicsRequest) []*topicDeletion {
	var entries []*topicDeletion
	for _, name := range req.TopicNames {
		entries = append(entries, &topicDeletion{name: name, named: true})
	}
	for _, t := range req.Topics {
		e := &topicDeletion{id: metadata.TopicID(t.TopicID)}
		if t.Topic != nil && *t.Topic != "" {
			e.name, e.named = *t.Topic, true
		}
		switch {
		case e.named && !e.id.IsZero():
			e.failure = fail(kerr.InvalidRequest, "topic %q is given with an id too; give one or the other", e.name)
		case !e.named && e.id.IsZero():
			e.failure = fail(kerr.InvalidRequest, "neither a topic name nor a topic id was given")
		}
		entries = append(entries, e)
	}
	return entries
}

// planTopicDeletions resolves every entry against the image.
func (c *Controller) planTopicDeletions(entries []*topicDeletion) {
	names := map[string]int{}
	ids := map[metadata.TopicID]int{}
	for _, e := range entries {
		if e.failure != nil {
			continue
		}
		if e.named {
			names[e.name]++
		} else {
			ids[e.id]++
		}
	}
	for _, e := range entries {
		if e.failure != nil {
			continue
		}
		if e.named {
			t, exists := c.image.Topics[e.name]
			switch {
			case names[e.name] > 1:
				e.failure = fail(kerr.InvalidRequest, "topic %q is named more than once in the request", e.name)
			case !exists:
				e.failure = fail(kerr.UnknownTopicOrPartition, "topic %q does not exist", e.name)
			case ids[t.ID] > 0:
				e.failure = fail(kerr.InvalidRequest, "topic %q is also given by its id %s", e.name, t.ID)
			default:
				e.id = t.ID
			}
			continue
		}
		t, exists := c.image.TopicsByID[e.id]
		switch {
		case ids[e.id] > 1:
			e.failure = fail(kerr.InvalidRequest, "topic id %s is given more than once in the request", e.id)
		case !exists:
			e.failure = fail(kerr.UnknownTopicID, "no topic has id %s", e.id)
		case names[t.Name] > 0:
			e.name = t.Name
			e.failure = fail(kerr.InvalidRequest, "topic id %s is also given by its name %q", e.id, t.Name)
		default:
			e.name = t.Name
		}
	}
}

// deleteTopicsAnswer builds the answer; outcome is the commit's.
func deleteTopicsAnswer(req *kmsg.DeleteTopicsRequest, entries []*topicDeletion, outcome *failure) *kmsg.DeleteTopicsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteTopicsResponse)
	for _, e := range entries {
		answer := kmsg.NewDeleteTopicsResponseTopic()
		if e.name != "" {
			name := e.name
			answer.Topic = &name
		}
		answer.TopicID = e.id
		f := e.failure
		if f == nil {
			f = outcome
		}
		answer.ErrorCode = f.errorCode()
		answer.ErrorMessage = f.messagePointer()
		resp.Topics = append(resp.Topics, answer)
	}
	return resp
}
