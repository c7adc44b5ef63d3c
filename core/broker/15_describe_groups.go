package broker

// DescribeGroups (key 15), versions 0-5.
//
// Handed to the group coordinator (core/group, describe.go): each group's
// state, protocol and members, with their metadata and assignments while
// the group is Stable. A group this node coordinates but does not know is
// answered as Dead without error, as Kafka does before v6.
//
// Version notes: v3 can ask for authorized operations (not computed:
// reported as omitted); v4 shows group.instance.id; v5 is flexible.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 15, advertisedMin: 0, honouredMin: 0, max: 5, handle: (*Broker).handleDescribeGroups})
}

func (b *Broker) handleDescribeGroups(x *exchange) {
	x.respond(b.groups.coordinator.DescribeGroups(x.request.Body.(*kmsg.DescribeGroupsRequest)))
}
