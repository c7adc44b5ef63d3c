package broker

// DescribeGroups (key 15), versions 0-5.
//
// Handed to the group coordinator (core/group, describe.go): each group's
// state, protocol and members, with their metadata and assignments while
// the group is Stable. A group this node coordinates but does not know is
// answered as Dead without error, as Kafka does before v6.
//
// Version notes: v3 can ask for authorized operations (every operation a
// group supports: no authorizer; authorized_operations.go); v4 shows
// group.instance.id; v5 is flexible.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 15, advertisedMin: 0, honouredMin: 0, max: 5, handle: (*Broker).handleDescribeGroups})
}

func (b *Broker) handleDescribeGroups(x *exchange) {
	req := x.request.Body.(*kmsg.DescribeGroupsRequest)
	resp := b.groups.coordinator.DescribeGroups(req)
	if req.IncludeAuthorizedOperations && req.Version >= 3 {
		for i := range resp.Groups {
			resp.Groups[i].AuthorizedOperations = groupOperations
		}
	}
	x.respond(resp)
}
