package broker

// CreateTopics (key 19), versions 2-7.
//
// The controller judges and creates the topics (core/controller,
// CreateTopics: names, partitions, replication factor, manual assignments,
// configs, ValidateOnly). The answer is sent once the creation has
// committed and this broker has applied it: the single-node quorum applies
// every committed record, on every node's image, before it calls the
// controller back, so a client that reads Metadata right after the answer
// finds the topic and its leaders. In a cluster, a broker answering for a
// controller elsewhere must likewise wait until its own image reaches the
// commit's offset.
//
// Version notes: Kafka 4 serves v2 and up. v1 brought ValidateOnly and
// error messages; v4 lets NumPartitions and ReplicationFactor be -1 for the
// broker defaults (KIP-464, honoured at every version here); v5 is flexible
// and answers the partition count, replication factor and configs; v7
// answers the topic id.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 19, advertisedMin: 2, honouredMin: 2, max: 7, handle: (*Broker).handleCreateTopics})
}

func (b *Broker) handleCreateTopics(x *exchange) {
	req := x.request.Body.(*kmsg.CreateTopicsRequest)
	b.controller.CreateTopics(req, func(resp *kmsg.CreateTopicsResponse) { x.respond(resp) })
}
