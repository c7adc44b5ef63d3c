package controller

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestRegisterBrokerIsFencedUntilItsHeartbeatShowsItCaughtUp(t *testing.T) {
	tc := newTestController(t, Config{})
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.BrokerID = 7
	req.IncarnationID = [16]byte{1, 2, 3}
	rack := "rack-a"
	req.Rack = &rack
	for _, name := range []string{"PLAINTEXT", "SECOND"} {
		listener := kmsg.NewBrokerRegistrationRequestListener()
		listener.Name, listener.Host, listener.Port = name, "broker-"+name, 9092
		req.Listeners = append(req.Listeners, listener)
	}
	resp := call(t, func(done func(*kmsg.BrokerRegistrationResponse)) { tc.c.RegisterBroker(req, done) })
	requireCode(t, "register", resp.ErrorCode, nil, nil)
	// The activation barrier is at offset 0; the registration record
	// at 1 gives the epoch.
	if resp.BrokerEpoch != 1 {
		t.Fatalf("first registration got epoch %d, want 1", resp.BrokerEpoch)
	}
	tc.epochs[7] = resp.BrokerEpoch
	b := tc.c.Image().Brokers[7]
	if b == nil || !b.Fenced || b.Epoch != 1 || b.Host != "broker-PLAINTEXT" || b.Port != 9092 || b.Rack != "rack-a" || b.IncarnationID != req.IncarnationID {
		t.Fatalf("image has broker %+v", b)
	}
	if got := len(tc.proposer.proposals); got != 1 || len(tc.proposer.proposals[0]) != 1 || tc.proposer.proposals[0][0].RegisterBroker == nil {
		t.Fatalf("proposals %+v, want one of [register]", tc.proposer.proposals)
	}

	// A heartbeat from behind its own registration leaves it fenced.
	hb := tc.heartbeat(7, heartbeatOptions{offset: at(0)})
	if hb.ErrorCode != 0 || hb.IsCaughtUp || !hb.IsFenced || hb.ShouldShutdown {
		t.Fatalf("heartbeat from offset 0: %+v", hb)
	}
	// Once it has applied its registration, it is unfenced.
	hb = tc.heartbeat(7, heartbeatOptions{offset: at(1)})
	if hb.ErrorCode != 0 || !hb.IsCaughtUp || hb.IsFenced || tc.c.Image().Brokers[7].Fenced {
		t.Fatalf("heartbeat from offset 1: %+v", hb)
	}
	// The same incarnation registering again (a lost answer) keeps its
	// epoch and writes nothing.
	proposals := len(tc.proposer.proposals)
	again := call(t, func(done func(*kmsg.BrokerRegistrationResponse)) { tc.c.RegisterBroker(req, done) })
	if again.ErrorCode != 0 || again.BrokerEpoch != 1 || len(tc.proposer.proposals) != proposals {
		t.Fatalf("repeated registration: %+v after %d proposals", again, len(tc.proposer.proposals)-proposals)
	}
}

func TestRegisterBrokerRefusesASecondLiveIncarnation(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2)
	resp := tc.register(1)
	if resp.ErrorCode != kerr.DuplicateBrokerRegistration.Code || resp.BrokerEpoch != -1 {
		t.Fatalf("second incarnation: %v, epoch %d", kerr.ErrorForCode(resp.ErrorCode), resp.BrokerEpoch)
	}
	// Once the first incarnation's session has expired, the new one
	// may register.
	tc.expire(1)
	resp = tc.register(1)
	requireCode(t, "after expiry", resp.ErrorCode, nil, nil)
}

func TestRegisterBrokerAfterControllerFailoverIsNotRefused(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	// A new controller term hands every broker a session it did not
	// renew itself; a restarted broker (a new incarnation) may register.
	tc.c.Deactivate()
	tc.c.Activate(2)
	resp := tc.register(1)
	requireCode(t, "register after failover", resp.ErrorCode, nil, nil)
}

func TestRegisterBrokerEpochsOnlyGrow(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2)
	previous := map[int32]int64{1: tc.epochs[1], 2: tc.epochs[2]}
	if previous[2] <= previous[1] {
		t.Fatalf("broker 2 registered after broker 1 with epoch %d <= %d", previous[2], previous[1])
	}
	highest := previous[2]
	for round := 0; round < 3; round++ {
		for _, id := range []int32{2, 1} {
			tc.expire(id)
			resp := tc.register(id)
			requireCode(t, "re-register", resp.ErrorCode, nil, nil)
			if resp.BrokerEpoch <= previous[id] || resp.BrokerEpoch <= highest {
				t.Fatalf("broker %d re-registered with epoch %d after %d (highest so far %d)", id, resp.BrokerEpoch, previous[id], highest)
			}
			// Single writer: the epoch is the offset of the
			// registration record, as in Kafka.
			if want := tc.proposer.nextOffset - 1; resp.BrokerEpoch != want {
				t.Fatalf("epoch %d, registration record at offset %d", resp.BrokerEpoch, want)
			}
			previous[id], highest = resp.BrokerEpoch, resp.BrokerEpoch
			if tc.c.Image().Brokers[id].Epoch != resp.BrokerEpoch || !tc.c.Image().Brokers[id].Fenced {
				t.Fatalf("image has %+v", tc.c.Image().Brokers[id])
			}
			if hb := tc.heartbeat(id, heartbeatOptions{}); hb.IsFenced {
				t.Fatalf("broker %d stayed fenced after a caught-up heartbeat", id)
			}
		}
	}
}

func TestRegisterBrokerRefusesUnusableRegistrations(t *testing.T) {
	tc := newTestController(t, Config{})
	for _, tt := range []struct {
		name   string
		change func(*kmsg.BrokerRegistrationRequest)
	}{
		{"negative id", func(r *kmsg.BrokerRegistrationRequest) { r.BrokerID = -1 }},
		{"no listener", func(r *kmsg.BrokerRegistrationRequest) { r.Listeners = nil }},
		{"listener without host", func(r *kmsg.BrokerRegistrationRequest) { r.Listeners[0].Host = "" }},
		{"listener without port", func(r *kmsg.BrokerRegistrationRequest) { r.Listeners[0].Port = 0 }},
	} {
		req := kmsg.NewPtrBrokerRegistrationRequest()
		req.BrokerID = 1
		listener := kmsg.NewBrokerRegistrationRequestListener()
		listener.Host, listener.Port = "h", 1
		req.Listeners = append(req.Listeners, listener)
		tt.change(req)
		resp := call(t, func(done func(*kmsg.BrokerRegistrationResponse)) { tc.c.RegisterBroker(req, done) })
		if resp.ErrorCode != kerr.InvalidRequest.Code || resp.BrokerEpoch != -1 {
			t.Errorf("%s: got %v epoch %d, want INVALID_REQUEST", tt.name, kerr.ErrorForCode(resp.ErrorCode), resp.BrokerEpoch)
		}
	}
	if len(tc.proposer.proposals) != 0 || len(tc.c.Image().Brokers) != 0 {
		t.Fatalf("refused registrations proposed %d times; brokers %v", len(tc.proposer.proposals), tc.c.Image().BrokerIDs())
	}
}

func TestAllocateProducerIDsHandsOutConsecutiveBlocks(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2)
	allocate := func(id int32, epoch int64) *kmsg.AllocateProducerIDsResponse {
		req := kmsg.NewPtrAllocateProducerIDsRequest()
		req.BrokerID, req.BrokerEpoch = id, epoch
		return call(t, func(done func(*kmsg.AllocateProducerIDsResponse)) { tc.c.AllocateProducerIDs(req, done) })
	}
	for i, id := range []int32{1, 2, 1} {
		resp := allocate(id, tc.epochs[id])
		requireCode(t, "allocate", resp.ErrorCode, nil, nil)
		if want := int64(i) * producerIDBlockSize; resp.ProducerIDStart != want || resp.ProducerIDLen != producerIDBlockSize {
			t.Fatalf("block %d: [%d, +%d), want [%d, +%d)", i, resp.ProducerIDStart, resp.ProducerIDLen, want, producerIDBlockSize)
		}
	}
	if got := tc.c.Image().NextProducerID; got != 3*producerIDBlockSize {
		t.Fatalf("next producer id %d, want %d", got, 3*producerIDBlockSize)
	}

	old := tc.epochs[1]
	tc.expire(1)
	tc.register(1)
	proposals := len(tc.proposer.proposals)
	for _, tt := range []struct {
		name  string
		id    int32
		epoch int64
	}{{"previous epoch", 1, old}, {"future epoch", 1, tc.epochs[1] + 1}, {"unregistered broker", 9, 1}} {
		resp := allocate(tt.id, tt.epoch)
		if resp.ErrorCode != kerr.StaleBrokerEpoch.Code || resp.ProducerIDLen != 0 {
			t.Errorf("%s: got %v and %d ids, want STALE_BROKER_EPOCH", tt.name, kerr.ErrorForCode(resp.ErrorCode), resp.ProducerIDLen)
		}
	}
	if len(tc.proposer.proposals) != proposals {
		t.Fatal("refused allocations proposed records")
	}
}
