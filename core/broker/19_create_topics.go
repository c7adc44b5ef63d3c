package broker

// CreateTopics (key 19), versions 2-7.
//
// The active controller judges and creates the topics (core/controller,
// CreateTopics: names, partitions, replication factor, manual assignments,
// configs, ValidateOnly); any broker forwards the request to it
// (forwarding.go). The answer is sent once the creation has committed and
// this broker's own image shows every created topic, so a client that
// reads Metadata from this broker right after the answer finds the topic
// and its leaders. When the controller is this node that is at once (the
// quorum applies a commit before calling the controller back); otherwise
// it waits for this broker to apply the records, within imageWaitMax.
//
// Version notes: Kafka 4 serves v2 and up. v1 brought ValidateOnly and
// error messages; v4 lets NumPartitions and ReplicationFactor be -1 for the
// broker defaults (KIP-464, honoured at every version here); v5 is flexible
// and answers the partition count, replication factor and configs; v7
// answers the topic id.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

func init() {
	registerAPI(&api{key: 19, advertisedMin: 2, honouredMin: 2, max: 7, handle: (*Broker).handleCreateTopics})
}

func (b *Broker) handleCreateTopics(x *exchange) {
	req := x.request.Body.(*kmsg.CreateTopicsRequest)
	b.createTopics(req, func(resp *kmsg.CreateTopicsResponse) { x.respond(resp) })
}

// createTopics has the active controller create topics, and answers once
// this broker's image shows every topic created and the replicas it hosts
// have taken up their directories (topicSettledHere).
func (b *Broker) createTopics(req *kmsg.CreateTopicsRequest, done func(*kmsg.CreateTopicsResponse)) {
	b.forward(req, func(r kmsg.Response) {
		resp := r.(*kmsg.CreateTopicsResponse)
		b.imageWaiters.wait(func() bool {
			for _, t := range resp.Topics {
				if t.ErrorCode == 0 && !req.ValidateOnly {
					if _, applied := b.image.TopicsByID[metadata.TopicID(t.TopicID)]; !applied || !b.topicSettledHere(t.Topic) {
						return false
					}
				}
			}
			return true
		}, func() { done(resp) })
	})
}
