package broker

// JoinGroup (key 11), versions 0-9.
//
// Handed to the group coordinator (core/group, join.go), which answers
// when the rebalance the join starts or joins completes — possibly much
// later (up to the rebalance timeout), so the request waits in the
// connection's queue meanwhile. The client id and host are recorded with
// the member.
//
// Version notes: v1 adds the rebalance timeout (v0 uses the session
// timeout); v4 answers a join without member id with MEMBER_ID_REQUIRED
// and a member id to rejoin with (KIP-394); v5 static membership,
// group.instance.id (KIP-345); v6 is flexible; v7 answers the protocol
// type; v8 adds the client's reason for joining (the coordinator's log
// line for the rebalance it starts names it); v9
// tells a static leader that rejoined a stable group that it leads, with
// SkipAssignment (KIP-814), so it keeps watching for new partitions.
// Kafka 4 no longer serves v0-v1; Sluice still does.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 11, advertisedMin: 0, honouredMin: 0, max: 9, handle: (*Broker).handleJoinGroup})
}

func (b *Broker) handleJoinGroup(x *exchange) {
	req := x.request.Body.(*kmsg.JoinGroupRequest)
	b.groups.coordinator.JoinGroup(req, groupClient(x), func(resp *kmsg.JoinGroupResponse) { x.respond(resp) })
}
