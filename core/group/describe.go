package group

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeGroups handles a DescribeGroups request (versions 0-5): each
// group's state, protocol and members. Member metadata and assignments
// are shown only for a Stable group, as Kafka does. A group this node
// coordinates but does not know is described as Dead, without error
// (GROUP_ID_NOT_FOUND comes with v6). Authorized operations are not
// computed and are reported as omitted.
func (c *Coordinator) DescribeGroups(req *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, id := range req.Groups {
		answer := kmsg.NewDescribeGroupsResponseGroup()
		answer.Group = id
		p, err := c.serving(id)
		if err != nil {
			answer.ErrorCode = kafkaCode(err)
			resp.Groups = append(resp.Groups, answer)
			continue
		}
		g := p.groups[id]
		if g == nil {
			answer.State = stateDead.String()
			resp.Groups = append(resp.Groups, answer)
			continue
		}
		answer.State = g.state.String()
		answer.ProtocolType = g.protocolType
		stable := g.is(stateStable)
		if stable {
			answer.Protocol = g.protocolName
		}
		for _, m := range g.members {
			described := kmsg.NewDescribeGroupsResponseGroupMember()
			described.MemberID = m.id
			described.InstanceID = cloneString(m.instanceID)
			described.ClientID = m.clientID
			described.ClientHost = m.clientHost
			if stable {
				described.ProtocolMetadata = m.metadata(g.protocolName)
				described.MemberAssignment = m.assignment
			}
			answer.Members = append(answer.Members, described)
		}
		resp.Groups = append(resp.Groups, answer)
	}
	return resp
}

// ListGroups handles a ListGroups request (versions 0-4): every group this
// node coordinates, sorted by id, optionally only those in the states
// named (v4, compared ignoring case as Kafka does). While a partition is
// still loading the answer says COORDINATOR_LOAD_IN_PROGRESS, with the
// groups already loaded.
func (c *Coordinator) ListGroups(req *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	if c.closed {
		resp.ErrorCode = kerr.CoordinatorNotAvailable.Code
		return resp
	}
	wanted := map[state]bool{}
	if req.Version >= 4 {
		for _, name := range req.StatesFilter {
			if s, ok := stateByLowerName(strings.TrimSpace(name)); ok {
				wanted[s] = true
			}
		}
	}
	filtering := req.Version >= 4 && len(req.StatesFilter) > 0
	var groups []*group
	for _, index := range sortedKeys(c.partitions) {
		p := c.partitions[index]
		if p.loading() {
			resp.ErrorCode = kerr.CoordinatorLoadInProgress.Code
			continue
		}
		for _, id := range sortedKeys(p.groups) {
			g := p.groups[id]
			if g.is(stateDead) || (filtering && !wanted[g.state]) {
				continue
			}
			groups = append(groups, g)
		}
	}
	slices.SortFunc(groups, func(a, b *group) int { return strings.Compare(a.id, b.id) })
	for _, g := range groups {
		listed := kmsg.NewListGroupsResponseGroup()
		listed.Group = g.id
		listed.ProtocolType = g.protocolType
		listed.GroupState = g.state.String()
		resp.Groups = append(resp.Groups, listed)
	}
	return resp
}
