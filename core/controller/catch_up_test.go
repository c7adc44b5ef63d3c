package controller

import "testing"

// A broker whose session expired comes back with an image past its
// registration but before its fencing: it stays fenced (and so gains no
// controller lease) until it has applied the fencing and every leadership
// moved away from it, whatever it believes it leads meanwhile. Found by
// cluster seed 5015 (scenarios/regressions).
func TestFencedBrokerStaysFencedUntilItHasAppliedItsLostLeaderships(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2, 3)
	topic := tc.mustCreate("t", 6, 3)
	led := 0
	for _, p := range topic.Partitions {
		if p.Leader == 2 {
			led++
		}
	}
	if led == 0 {
		t.Fatal("broker 2 leads no partition; the test needs one")
	}
	beforeFencing := tc.c.Image().Offset
	tc.expire(2)
	fencedThrough := tc.c.Image().Offset
	// The fencing record, then one leadership change per partition broker
	// 2 led (its ISR removals share those records or follow them).
	if fencedThrough < beforeFencing+1+int64(led) {
		t.Fatalf("fencing wrote offsets %d..%d, want at least %d records", beforeFencing+1, fencedThrough, 1+led)
	}
	for _, offset := range []int64{beforeFencing, beforeFencing + 1, fencedThrough - 1} {
		hb := tc.heartbeat(2, heartbeatOptions{offset: at(offset)})
		if hb.ErrorCode != 0 || hb.IsCaughtUp || !hb.IsFenced || !tc.c.Image().Brokers[2].Fenced {
			t.Fatalf("heartbeat from offset %d (fenced through %d): %+v", offset, fencedThrough, hb)
		}
	}
	if tc.c.Image().Offset != fencedThrough {
		t.Fatalf("heartbeats of a fenced broker behind its fencing wrote offsets %d..%d", fencedThrough+1, tc.c.Image().Offset)
	}
	hb := tc.heartbeat(2, heartbeatOptions{offset: at(fencedThrough)})
	if hb.ErrorCode != 0 || !hb.IsCaughtUp || hb.IsFenced || tc.c.Image().Brokers[2].Fenced {
		t.Fatalf("heartbeat from offset %d, past its fencing: %+v", fencedThrough, hb)
	}
}

// A topic's deletion concerns every broker that hosted it: one that has
// not applied it still serves the topic (by name, too, which a new topic
// may take), so its heartbeats renew no lease until it has.
func TestADeletedTopicsBrokersAreNotCaughtUpUntilTheyApplyIt(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2, 3)
	tc.mustCreate("t", 1, 3)
	before := tc.c.Image().Offset
	for _, id := range []int32{1, 2, 3} {
		if hb := tc.heartbeat(id, heartbeatOptions{offset: at(before)}); !hb.IsCaughtUp {
			t.Fatalf("broker %d not caught up before the deletion: %+v", id, hb)
		}
	}
	if resp := tc.deleteTopics("t"); resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("deleting: %+v", resp.Topics[0])
	}
	deleted := tc.c.Image().Offset
	for _, id := range []int32{1, 2, 3} {
		if hb := tc.heartbeat(id, heartbeatOptions{offset: at(before)}); hb.IsCaughtUp {
			t.Fatalf("broker %d caught up from offset %d, before the deletion at %d", id, before, deleted)
		}
		if hb := tc.heartbeat(id, heartbeatOptions{offset: at(deleted)}); !hb.IsCaughtUp {
			t.Fatalf("broker %d not caught up once it applied the deletion: %+v", id, hb)
		}
	}
}
