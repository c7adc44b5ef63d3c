package broker

// DeleteTopics (key 20), versions 1-6.
//
// The active controller removes the topics (core/controller,
// DeleteTopics); any broker forwards the request to it. When this broker
// applies the removal, it closes the topics' partitions, renames their
// directories aside and deletes them (partitions.go, removeTopic); the
// answer waits until it has (at once when the controller is this node). A
// topic created again under the same name is a new topic, with a new id
// and an empty log. Every other broker deletes its replicas when it
// applies the record.
//
// Version notes: Kafka 4 serves v1 and up. v4 is flexible; v5 answers
// error messages; v6 names topics by name or by id (Topics instead of
// TopicNames) and answers topic ids.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

func init() {
	registerAPI(&api{key: 20, advertisedMin: 1, honouredMin: 1, max: 6, handle: (*Broker).handleDeleteTopics})
}

func (b *Broker) handleDeleteTopics(x *exchange) {
	req := x.request.Body.(*kmsg.DeleteTopicsRequest)
	// Answers before v6 name topics without their ids: the ids this
	// broker knows now tell when its image has dropped them.
	known := map[string]metadata.TopicID{}
	for _, name := range req.TopicNames {
		if t, exists := b.image.Topics[name]; exists {
			known[name] = t.ID
		}
	}
	b.forward(req, func(r kmsg.Response) {
		resp := r.(*kmsg.DeleteTopicsResponse)
		b.imageWaiters.wait(func() bool {
			for _, t := range resp.Topics {
				id := metadata.TopicID(t.TopicID)
				if id.IsZero() && t.Topic != nil {
					id = known[*t.Topic]
				}
				if _, present := b.image.TopicsByID[id]; t.ErrorCode == 0 && !id.IsZero() && present {
					return false
				}
			}
			return true
		}, func() { x.respond(resp) })
	})
}
