package group

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A member may name one protocol twice (nothing in the protocol forbids
// it): it supports it once. Counted twice, a lone member's protocol was
// supported by "two" of its one members, so no protocol was one every
// member supports and choosing the generation's protocol panicked, which a
// client could do to a broker at will (found by core/broker's
// TestRequestsNoClientSendsAreAnsweredWithoutHarm).
func TestAMemberNamingAProtocolTwiceSupportsItOnce(t *testing.T) {
	tc := newTestCoordinator(t, testConfig())
	protocols := []string{"range", "roundrobin", "range"}
	first := tc.join(joinSpec{group: "g", clientID: "a", protocols: protocols}).require(t, "first join of a")
	requireCode(t, "first join of a", first.ErrorCode, kerr.MemberIDRequired)
	a := &testMember{group: "g", id: first.MemberID, clientID: "a"}
	joinA := tc.join(joinSpec{group: "g", clientID: "a", memberID: a.id, protocols: protocols})

	// A second member that supports only roundrobin joins the same
	// rebalance: the one protocol both support.
	first = tc.join(joinSpec{group: "g", clientID: "b", protocols: []string{"roundrobin"}}).require(t, "first join of b")
	requireCode(t, "first join of b", first.ErrorCode, kerr.MemberIDRequired)
	b := &testMember{group: "g", id: first.MemberID, clientID: "b"}
	joinB := tc.join(joinSpec{group: "g", clientID: "b", memberID: b.id, protocols: []string{"roundrobin"}})

	// The initial delay grows with each member that joins during it.
	tc.run(2 * tc.config.InitialRebalanceDelay)
	for _, j := range []struct {
		m    *testMember
		join *answer[*kmsg.JoinGroupResponse]
	}{{a, joinA}, {b, joinB}} {
		resp := j.join.require(t, "join of "+j.m.clientID)
		j.m.joined(t, resp)
		if got := protocolOf(resp); got != "roundrobin" {
			t.Fatalf("%s joined generation %d with protocol %q, want roundrobin", j.m.clientID, resp.Generation, got)
		}
	}

	// Alone, a member naming range twice gets range.
	tc.leave("g", b)
	tc.run(0)
	rejoin := tc.join(joinSpec{group: "g", clientID: "a", memberID: a.id, protocols: []string{"range", "range"}})
	tc.run(tc.config.InitialRebalanceDelay)
	resp := rejoin.require(t, "rejoin of a alone")
	a.joined(t, resp)
	if got := protocolOf(resp); got != "range" {
		t.Fatalf("a rejoined alone with protocol %q, want range", got)
	}
}

func protocolOf(resp *kmsg.JoinGroupResponse) string {
	if resp.Protocol == nil {
		return "<null>"
	}
	return *resp.Protocol
}
