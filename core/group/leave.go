package group

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// LeaveGroup handles a LeaveGroup request (versions 0-5). A member leaving
// makes the group rebalance at once rather than after its session
// timeout. From v3 one request may remove several members, and an
// administrator may remove a static member by its group.instance.id alone
// (KIP-345); each gets its own error. Before v3 the one member's error is
// the request's.
func (c *Coordinator) LeaveGroup(req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	leaving := req.Members
	if req.Version < 3 {
		one := kmsg.NewLeaveGroupRequestMember()
		one.MemberID = req.MemberID
		leaving = []kmsg.LeaveGroupRequestMember{one}
	}
	memberErrors, groupError := c.leave(req.Group, leaving)
	resp.ErrorCode = kafkaCode(groupError)
	if req.Version < 3 {
		for _, err := range memberErrors {
			if err != nil && resp.ErrorCode == 0 {
				resp.ErrorCode = kafkaCode(err)
			}
		}
		return resp
	}
	for i, identity := range leaving {
		if groupError != nil {
			break
		}
		answer := kmsg.NewLeaveGroupResponseMember()
		answer.MemberID = identity.MemberID
		answer.InstanceID = identity.InstanceID
		answer.ErrorCode = kafkaCode(memberErrors[i])
		resp.Members = append(resp.Members, answer)
	}
	return resp
}

// leave removes the members named, and returns one error per member or
// one for the whole request.
func (c *Coordinator) leave(groupID string, leaving []kmsg.LeaveGroupRequestMember) (memberErrors []error, groupError error) {
	if groupID == "" {
		return nil, kerr.InvalidGroupID
	}
	p, err := c.serving(groupID)
	if err != nil {
		return nil, err
	}
	errs := make([]error, len(leaving))
	g := p.groups[groupID]
	if g == nil {
		for i := range errs {
			errs[i] = kerr.UnknownMemberID
		}
		return errs, nil
	}
	if g.is(stateDead) {
		return nil, kerr.CoordinatorNotAvailable
	}
	for i, identity := range leaving {
		errs[i] = c.leaveOne(g, identity)
	}
	return errs, nil
}

func (c *Coordinator) leaveOne(g *group, identity kmsg.LeaveGroupRequestMember) error {
	memberID := identity.MemberID
	switch {
	case memberID == "":
		// An administrator removing a static member by instance id.
		if identity.InstanceID == nil {
			return kerr.UnknownMemberID
		}
		current, known := g.currentStaticMemberID(*identity.InstanceID)
		if !known {
			return kerr.UnknownMemberID
		}
		c.removeMemberAndUpdateGroup(g, g.byID[current], "removed by instance id")
		return nil
	case g.isPending(memberID):
		g.forgetPendingMember(memberID)
		if g.is(statePreparingRebalance) {
			c.maybeCompleteJoin(g)
		}
		return nil
	}
	if err := validateCurrentMember(g, memberID, identity.InstanceID); err != nil {
		return err
	}
	c.removeMemberAndUpdateGroup(g, g.byID[memberID], "member left")
	return nil
}
