package broker

// SyncGroup (key 14), versions 0-5.
//
// Handed to the group coordinator (core/group, sync.go): members wait
// here until the leader's assignment is persisted in __consumer_offsets,
// then each gets its part.
//
// Version notes: v3 adds group.instance.id; v4 is flexible; v5 carries
// the protocol type and name, checked against the group's
// (INCONSISTENT_GROUP_PROTOCOL).

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 14, advertisedMin: 0, honouredMin: 0, max: 5, handle: (*Broker).handleSyncGroup})
}

func (b *Broker) handleSyncGroup(x *exchange) {
	req := x.request.Body.(*kmsg.SyncGroupRequest)
	b.groups.coordinator.SyncGroup(req, func(resp *kmsg.SyncGroupResponse) { x.respond(resp) })
}
