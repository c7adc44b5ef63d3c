package broker

// DeleteTopics (key 20), versions 1-6.
//
// The controller removes the topics (core/controller, DeleteTopics); when
// the removal commits, this broker closes the topics' partitions, renames
// their directories aside and deletes them (partitions.go, removeTopic),
// all before the answer, since the single-node quorum applies a commit
// before calling the controller back. A topic created again under the same
// name is a new topic, with a new id and an empty log. In a cluster, other
// brokers delete their replicas when they apply the record.
//
// Version notes: Kafka 4 serves v1 and up. v4 is flexible; v5 answers
// error messages; v6 names topics by name or by id (Topics instead of
// TopicNames) and answers topic ids.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 20, advertisedMin: 1, honouredMin: 1, max: 6, handle: (*Broker).handleDeleteTopics})
}

func (b *Broker) handleDeleteTopics(x *exchange) {
	req := x.request.Body.(*kmsg.DeleteTopicsRequest)
	b.controller.DeleteTopics(req, func(resp *kmsg.DeleteTopicsResponse) { x.respond(resp) })
}
