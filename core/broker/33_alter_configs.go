package broker

// AlterConfigs (key 33), versions 0-2.
//
// The legacy way to change configs: each topic's explicit configs are
// replaced by the set given (core/controller, AlterConfigs), by the active
// controller, to which any broker forwards the request. Broker resources
// may not change anything: Sluice's broker configs are static. When the
// controller is this node, the answer is sent once the change is applied
// here, including to the topic's open partitions (partitions.go,
// reconfigureTopic); another broker applies it when it reaches the
// records. Kafka deprecates this API in favour of IncrementalAlterConfigs.
//
// Version notes: v1 is v0 with throttling; v2 is flexible.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 33, advertisedMin: 0, honouredMin: 0, max: 2, handle: (*Broker).handleAlterConfigs})
}

func (b *Broker) handleAlterConfigs(x *exchange) {
	req := x.request.Body.(*kmsg.AlterConfigsRequest)
	b.forward(req, func(resp kmsg.Response) { x.respond(resp) })
}
