package broker

// IncrementalAlterConfigs (key 44), versions 0-1.
//
// Changes topic configs one at a time: SET, DELETE (back to the default),
// APPEND and SUBTRACT for list configs such as cleanup.policy
// (core/controller, IncrementalAlterConfigs). Broker resources may not
// change anything: Sluice's broker configs are static. The answer is sent
// once the change is applied here, including to the topic's open
// partitions.
//
// Version notes: v1 is flexible.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 44, advertisedMin: 0, honouredMin: 0, max: 1, handle: (*Broker).handleIncrementalAlterConfigs})
}

func (b *Broker) handleIncrementalAlterConfigs(x *exchange) {
	req := x.request.Body.(*kmsg.IncrementalAlterConfigsRequest)
	b.controller.IncrementalAlterConfigs(req, func(resp *kmsg.IncrementalAlterConfigsResponse) { x.respond(resp) })
}
