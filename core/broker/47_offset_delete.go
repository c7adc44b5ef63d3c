package broker

// OffsetDelete (key 47), version 0 (KIP-496).
//
// Handed to the group coordinator (core/group, delete.go): a group's
// committed offsets of the partitions named are tombstoned, except those
// of topics its active consumers subscribe to (GROUP_SUBSCRIBED_TO_TOPIC),
// and the answer waits for the tombstones to commit.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 47, advertisedMin: 0, honouredMin: 0, max: 0, handle: (*Broker).handleOffsetDelete})
}

func (b *Broker) handleOffsetDelete(x *exchange) {
	req := x.request.Body.(*kmsg.OffsetDeleteRequest)
	b.groups.coordinator.OffsetDelete(req, func(resp *kmsg.OffsetDeleteResponse) { x.respond(resp) })
}
