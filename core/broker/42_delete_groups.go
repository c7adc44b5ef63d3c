package broker

// DeleteGroups (key 42), versions 0-2.
//
// Handed to the group coordinator (core/group, delete.go): groups without
// members are deleted, their metadata and offsets tombstoned in
// __consumer_offsets, and the answer waits for the tombstones to commit.
//
// Version notes: v1 is v0 with throttling; v2 is flexible.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 42, advertisedMin: 0, honouredMin: 0, max: 2, handle: (*Broker).handleDeleteGroups})
}

func (b *Broker) handleDeleteGroups(x *exchange) {
	req := x.request.Body.(*kmsg.DeleteGroupsRequest)
	b.groups.coordinator.DeleteGroups(req, func(resp *kmsg.DeleteGroupsResponse) { x.respond(resp) })
}
