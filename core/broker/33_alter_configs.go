package broker

// AlterConfigs (key 33), versions 0-2.
//
// The legacy way to change configs: each topic's explicit configs are
// replaced by the set given (core/controller, AlterConfigs). Broker
// resources may not change anything: Sluice's broker configs are static.
// The answer is sent once the change is applied here, including to the
// topic's open partitions (partitions.go, reconfigureTopic). Kafka
// deprecates this API in favour of IncrementalAlterConfigs.
//
// Version notes: v1 is v0 with throttling; v2 is flexible.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 33, advertisedMin: 0, honouredMin: 0, max: 2, handle: (*Broker).handleAlterConfigs})
}

func (b *Broker) handleAlterConfigs(x *exchange) {
	req := x.request.Body.(*kmsg.AlterConfigsRequest)
	b.controller.AlterConfigs(req, func(resp *kmsg.AlterConfigsResponse) { x.respond(resp) })
}
