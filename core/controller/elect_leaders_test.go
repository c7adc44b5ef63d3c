package controller

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// electLeaders sends ElectLeaders v2 of the given type for partitions of
// topic t (every partition of every topic when none are given).
func (tc *testController) electLeaders(electionType int8, partitions ...int32) *kmsg.ElectLeadersResponse {
	tc.t.Helper()
	req := kmsg.NewPtrElectLeadersRequest()
	req.Version, req.ElectionType, req.TimeoutMillis = 2, electionType, 30_000
	if len(partitions) > 0 {
		rt := kmsg.NewElectLeadersRequestTopic()
		rt.Topic, rt.Partitions = "t", partitions
		req.Topics = append(req.Topics, rt)
	}
	return call(tc.t, func(done func(*kmsg.ElectLeadersResponse)) { tc.c.ElectLeaders(req, done) })
}

// electionCodes lists an answer's partitions with their error codes.
func electionCodes(resp *kmsg.ElectLeadersResponse) map[int32]int16 {
	codes := map[int32]int16{}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			codes[p.Partition] = p.ErrorCode
		}
	}
	return codes
}

const (
	preferredElection int8 = 0
	uncleanElection   int8 = 1
)

// A preferred election moves leadership back to the first replica once it
// is in the ISR, cleanly; before that, and once it leads, there is nothing
// it may do. With no partitions named, only those needing one answer.
func TestElectLeadersPreferred(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2)
	tc.mustCreate("t", 1, 2)
	p := tc.c.Image().Topics["t"].Partitions[0]
	preferred, other := p.Replicas[0], p.Replicas[1]
	tc.expire(preferred) // leadership moves to the other replica
	tc.heartbeat(preferred, heartbeatOptions{})
	if p.Leader != other || !slices.Equal(p.ISR, []int32{other}) {
		t.Fatalf("leader %d ISR %v, want %d alone", p.Leader, p.ISR, other)
	}

	resp := tc.electLeaders(preferredElection, 0, 0, 7)
	if codes := electionCodes(resp); len(codes) != 2 || codes[0] != kerr.PreferredLeaderNotAvailable.Code || codes[7] != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("out of the ISR: %+v", resp)
	}

	alter := tc.alterPartition(3, other, alterISR("t", p, other, preferred))
	requireErrorCode(t, "expand", alter.Topics[0].Partitions[0].ErrorCode, nil)
	epoch := p.LeaderEpoch
	resp = tc.electLeaders(preferredElection, 0)
	if codes := electionCodes(resp); codes[0] != 0 || resp.ErrorCode != 0 {
		t.Fatalf("in the ISR: %+v", resp)
	}
	requireLeadershipInvariants(t, tc.c.Image())
	if p.Leader != preferred || p.LeaderEpoch != epoch+1 || p.UncleanEpoch != 0 || len(p.ISR) != 2 {
		t.Fatalf("leader %d epoch %d unclean epoch %d ISR %v, want %d at epoch %d, clean, ISR kept", p.Leader, p.LeaderEpoch, p.UncleanEpoch, p.ISR, preferred, epoch+1)
	}

	resp = tc.electLeaders(preferredElection, 0)
	if codes := electionCodes(resp); codes[0] != kerr.ElectionNotNeeded.Code {
		t.Fatalf("led by its preferred replica: %+v", resp)
	}
	if resp = tc.electLeaders(preferredElection); len(resp.Topics) != 0 {
		t.Fatalf("every partition, none needing an election: %+v", resp)
	}
}

// An unclean election brings back a partition whose ISR is all down, from
// outside the ISR, whatever the topic's config, and marks it unclean; a
// partition with a leader needs none.
func TestElectLeadersUnclean(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2)
	p, follower := strandPartition(t, tc)
	if resp := tc.electLeaders(preferredElection, 0); electionCodes(resp)[0] != kerr.PreferredLeaderNotAvailable.Code {
		t.Fatalf("preferred, with its only ISR member down: %+v", resp)
	}
	epoch := p.LeaderEpoch
	resp := tc.electLeaders(uncleanElection)
	if codes := electionCodes(resp); len(codes) != 1 || codes[0] != 0 {
		t.Fatalf("unclean: %+v", resp)
	}
	requireLeadershipInvariants(t, tc.c.Image())
	if p.Leader != follower || !slices.Equal(p.ISR, []int32{follower}) || p.UncleanEpoch != epoch+1 {
		t.Fatalf("leader %d ISR %v unclean epoch %d, want %d alone, unclean at %d", p.Leader, p.ISR, p.UncleanEpoch, follower, epoch+1)
	}
	if resp := tc.electLeaders(uncleanElection, 0); electionCodes(resp)[0] != kerr.ElectionNotNeeded.Code {
		t.Fatalf("unclean, with a leader: %+v", resp)
	}
}

// An election type Kafka does not define is refused as a whole.
func TestElectLeadersRefusesAnUnknownType(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	tc.mustCreate("t", 1, 1)
	if resp := tc.electLeaders(2, 0); resp.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("election type 2: %+v", resp)
	}
}
