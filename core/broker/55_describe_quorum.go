package broker

// DescribeQuorum (key 55), versions 0-2.
//
// Describes the metadata quorum: its leader, epoch and high watermark, and
// how far each voter and observer has replicated (kafka-metadata-quorum
// describe). Only the leader knows all of that, so any node forwards the
// request to the quorum leader, as Kafka brokers do, over the leader's
// controller listener, or answers it itself when it leads
// (forwarding.go). Served on both listeners, so that a client can ask any
// broker.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 55, advertisedMin: 0, honouredMin: 0, max: 2, handle: (*Broker).handleDescribeQuorum})
}

func (b *Broker) handleDescribeQuorum(x *exchange) {
	b.forward(x.request.Body.(*kmsg.DescribeQuorumRequest), func(resp kmsg.Response) { x.respond(resp) })
}
