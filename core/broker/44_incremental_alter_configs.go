package broker

// IncrementalAlterConfigs (key 44), versions 0-1.
//
// Changes topic configs one at a time: SET, DELETE (back to the default),
// APPEND and SUBTRACT for list configs such as cleanup.policy
// (core/controller, IncrementalAlterConfigs), by the active controller, to
// which any broker forwards the request. Broker resources may not change
// anything: Sluice's broker configs are static. When the controller is
// this node, the answer is sent once the change is applied here, including
// to the topic's open partitions; another broker applies it when it
// reaches the records.
//
// Version notes: v1 is flexible.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 44, advertisedMin: 0, honouredMin: 0, max: 1, handle: (*Broker).handleIncrementalAlterConfigs})
}

func (b *Broker) handleIncrementalAlterConfigs(x *exchange) {
	req := x.request.Body.(*kmsg.IncrementalAlterConfigsRequest)
	b.forward(req, func(resp kmsg.Response) { x.respond(resp) })
}
