package broker

// ListGroups (key 16), versions 0-4.
//
// Handed to the group coordinator (core/group, describe.go): the groups
// this broker coordinates, sorted by id. Like Kafka, a broker lists only
// its own groups; tools ask every broker.
//
// Version notes: v3 is flexible; v4 filters by state (KIP-518) and
// answers each group's state.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 16, advertisedMin: 0, honouredMin: 0, max: 4, handle: (*Broker).handleListGroups})
}

func (b *Broker) handleListGroups(x *exchange) {
	x.respond(b.groups.coordinator.ListGroups(x.request.Body.(*kmsg.ListGroupsRequest)))
}
