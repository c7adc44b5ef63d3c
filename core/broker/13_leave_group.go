package broker

// LeaveGroup (key 13), versions 0-5.
//
// Handed to the group coordinator (core/group, leave.go): the members
// leave at once and the group rebalances without waiting for their
// sessions to expire.
//
// Version notes: v3 removes several members in one request, by member id
// or (administrators) by group.instance.id alone, each with its own error
// (KIP-345); v4 is flexible; v5 carries a reason, which is not kept.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 13, advertisedMin: 0, honouredMin: 0, max: 5, handle: (*Broker).handleLeaveGroup})
}

func (b *Broker) handleLeaveGroup(x *exchange) {
	x.respond(b.groups.coordinator.LeaveGroup(x.request.Body.(*kmsg.LeaveGroupRequest)))
}
