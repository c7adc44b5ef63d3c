package controller

import (
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

// requireLeadershipInvariants checks what every election must leave
// behind: every ISR non-empty and made of replicas, every leader a
// registered, unfenced broker in its partition's ISR.
func requireLeadershipInvariants(t tester, img *metadata.Image) {
	t.Helper()
	for _, name := range img.TopicNames() {
		for _, p := range img.Topics[name].Partitions {
			if len(p.ISR) == 0 {
				t.Fatalf("%s-%d has an empty ISR", name, p.Index)
			}
			for _, id := range p.ISR {
				if !slices.Contains(p.Replicas, id) {
					t.Fatalf("%s-%d: ISR member %d is not a replica of %v", name, p.Index, id, p.Replicas)
				}
			}
			if p.Leader < 0 {
				continue
			}
			if b := img.Brokers[p.Leader]; b == nil || b.Fenced || !slices.Contains(p.ISR, p.Leader) {
				t.Fatalf("%s-%d is led by %d (registration %+v), ISR %v", name, p.Index, p.Leader, b, p.ISR)
			}
		}
	}
}

// partitionState is what elections change, copied for comparison.
type partitionState struct {
	leader, leaderEpoch, partitionEpoch int32
	isr                                 []int32
}

func snapshotPartitions(topic *metadata.Topic) []partitionState {
	states := make([]partitionState, len(topic.Partitions))
	for i, p := range topic.Partitions {
		states[i] = partitionState{p.Leader, p.LeaderEpoch, p.PartitionEpoch, slices.Clone(p.ISR)}
	}
	return states
}

func TestInactiveControllerAnswersNotController(t *testing.T) {
	tc := newInactiveController(t, Config{})
	register := tc.register(1)
	heartbeat := tc.heartbeat(1, heartbeatOptions{})
	create := tc.createTopics(false, topicRequest("t", 1, 1))
	if register.ErrorCode != kerr.NotController.Code || heartbeat.ErrorCode != kerr.NotController.Code ||
		create.Topics[0].ErrorCode != kerr.NotController.Code {
		t.Fatalf("inactive controller answered %v, %v, %v", kerr.ErrorForCode(register.ErrorCode),
			kerr.ErrorForCode(heartbeat.ErrorCode), kerr.ErrorForCode(create.Topics[0].ErrorCode))
	}
	if len(tc.proposer.proposals) != 0 {
		t.Fatalf("an inactive controller proposed %d times", len(tc.proposer.proposals))
	}
}

func TestActivationWaitsForItsBarrierBeforeActing(t *testing.T) {
	tc := newInactiveController(t, Config{})
	tc.proposer.holding = true
	tc.c.Activate(1)
	if tc.c.IsActive() || len(tc.proposer.pending) != 1 {
		t.Fatalf("active %v with %d proposals pending; want the barrier pending", tc.c.IsActive(), len(tc.proposer.pending))
	}
	barrier := tc.proposer.pending[0].records
	if len(barrier) != 1 || barrier[0].NoOp == nil {
		t.Fatalf("barrier %+v", barrier)
	}
	// A registration arriving meanwhile waits behind the barrier.
	var answers []*kmsg.BrokerRegistrationResponse
	req := kmsg.NewPtrBrokerRegistrationRequest()
	req.BrokerID = 1
	listener := kmsg.NewBrokerRegistrationRequestListener()
	listener.Host, listener.Port = "h", 1
	req.Listeners = append(req.Listeners, listener)
	tc.c.RegisterBroker(req, func(r *kmsg.BrokerRegistrationResponse) { answers = append(answers, r) })
	if len(answers) != 0 || len(tc.proposer.pending) != 1 {
		t.Fatalf("the registration ran before the barrier committed")
	}
	tc.proposer.release(t) // the barrier
	if !tc.c.IsActive() || len(tc.proposer.pending) != 1 {
		t.Fatalf("after the barrier: active %v, %d pending", tc.c.IsActive(), len(tc.proposer.pending))
	}
	tc.proposer.release(t) // the registration
	if len(answers) != 1 || answers[0].ErrorCode != 0 || answers[0].BrokerEpoch != 1 {
		t.Fatalf("answers %+v", answers)
	}
	// The barrier changed nothing in the image.
	if len(tc.c.Image().Configs) != 0 {
		t.Fatalf("the barrier left configs %v", tc.c.Image().Configs)
	}
}

func TestDeactivationRefusesQueuedOperations(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	tc.proposer.holding = true
	var first, second *kmsg.CreateTopicsResponse
	createReq := func(name string) *kmsg.CreateTopicsRequest {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Topics = append(req.Topics, topicRequest(name, 1, 1))
		return req
	}
	tc.c.CreateTopics(createReq("a"), func(r *kmsg.CreateTopicsResponse) { first = r })
	tc.c.CreateTopics(createReq("b"), func(r *kmsg.CreateTopicsResponse) { second = r })
	tc.c.Deactivate()
	tc.proposer.release(t) // "a" was proposed before the deactivation and commits
	if first == nil || first.Topics[0].ErrorCode != 0 {
		t.Fatalf("the proposed creation: %+v", first)
	}
	if second == nil || second.Topics[0].ErrorCode != kerr.NotController.Code {
		t.Fatalf("the queued creation: %+v", second)
	}
	if len(tc.proposer.pending) != 0 {
		t.Fatal("an inactive controller proposed the queued creation")
	}
}

func TestActivationGivesEveryBrokerAFreshSession(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2)
	tc.c.Deactivate()
	// Inactive, nobody is fenced however long the silence.
	tc.elapse(time.Minute)
	tc.c.Activate(2)
	tc.elapse(defaultSessionTimeout - time.Second)
	for _, id := range []int32{1, 2} {
		if tc.c.Image().Brokers[id].Fenced {
			t.Fatalf("broker %d fenced before its fresh session ran out", id)
		}
	}
	tc.heartbeat(1, heartbeatOptions{})
	tc.elapse(2 * time.Second)
	if tc.c.Image().Brokers[1].Fenced || !tc.c.Image().Brokers[2].Fenced {
		t.Fatalf("after the session timeout: broker 1 fenced %v (heartbeated), broker 2 fenced %v (silent)",
			tc.c.Image().Brokers[1].Fenced, tc.c.Image().Brokers[2].Fenced)
	}
}

func TestSessionExpiryFencesAndMovesLeadershipsWithinTheISR(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2, 3)
	topic := tc.mustCreate("t", 6, 3)
	before := snapshotPartitions(topic)
	tc.expire(2)
	requireLeadershipInvariants(t, tc.c.Image())
	for i, p := range topic.Partitions {
		was := before[i]
		if slices.Contains(p.ISR, 2) || p.Leader == 2 {
			t.Fatalf("partition %d still has broker 2: leader %d ISR %v", i, p.Leader, p.ISR)
		}
		wantISR := minus(was.isr, []int32{2})
		if !slices.Equal(p.ISR, wantISR) || p.PartitionEpoch != was.partitionEpoch+1 {
			t.Fatalf("partition %d: ISR %v epoch %d, want %v epoch %d", i, p.ISR, p.PartitionEpoch, wantISR, was.partitionEpoch+1)
		}
		switch {
		case was.leader == 2:
			// The first replica, in replica order, left in the ISR.
			var want int32 = -1
			for _, r := range p.Replicas {
				if slices.Contains(wantISR, r) {
					want = r
					break
				}
			}
			if p.Leader != want || p.LeaderEpoch != was.leaderEpoch+1 {
				t.Fatalf("partition %d: leader %d epoch %d, want %d epoch %d", i, p.Leader, p.LeaderEpoch, want, was.leaderEpoch+1)
			}
		case p.Leader != was.leader || p.LeaderEpoch != was.leaderEpoch:
			t.Fatalf("partition %d changed leader from %d to %d", i, was.leader, p.Leader)
		}
	}
	// Broker 2 comes back: unfenced, but it leads nothing and joins no
	// ISR until a leader's AlterPartition adds it.
	hb := tc.heartbeat(2, heartbeatOptions{})
	if hb.ErrorCode != 0 || hb.IsFenced {
		t.Fatalf("heartbeat after expiry: %+v", hb)
	}
	for i, p := range topic.Partitions {
		if slices.Contains(p.ISR, 2) || p.Leader == 2 {
			t.Fatalf("partition %d gave broker 2 back leader or ISR: %d %v", i, p.Leader, p.ISR)
		}
	}
}

func TestFencedOnlyReplicaLeavesThePartitionLeaderlessUntilItReturns(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2)
	tc.mustCreate("t", 4, 1)
	led := map[int32]int32{} // partition -> epoch, for those broker 2 leads
	for _, p := range tc.c.Image().Topics["t"].Partitions {
		if p.Leader == 2 {
			led[p.Index] = p.LeaderEpoch
		}
	}
	if len(led) != 2 {
		t.Fatalf("broker 2 leads %d of 4 partitions, want 2", len(led))
	}
	tc.expire(2)
	requireLeadershipInvariants(t, tc.c.Image())
	for _, p := range tc.c.Image().Topics["t"].Partitions {
		if _, was := led[p.Index]; was && (p.Leader != -1 || !slices.Equal(p.ISR, []int32{2})) {
			t.Fatalf("partition %d: leader %d ISR %v, want leaderless with ISR [2]", p.Index, p.Leader, p.ISR)
		}
	}
	tc.heartbeat(2, heartbeatOptions{})
	for _, p := range tc.c.Image().Topics["t"].Partitions {
		if epoch, was := led[p.Index]; was && (p.Leader != 2 || p.LeaderEpoch != epoch+2) {
			t.Fatalf("partition %d: leader %d epoch %d, want 2 at epoch %d", p.Index, p.Leader, p.LeaderEpoch, epoch+2)
		}
	}
}

func TestUncleanElectionOnlyWhereTheTopicAllowsIt(t *testing.T) {
	for _, unclean := range []bool{false, true} {
		tc := newTestController(t, Config{}, 1, 2)
		configs := []string{}
		if unclean {
			configs = []string{metadata.ConfigUncleanLeaderElection, "true"}
		}
		tc.mustCreate("t", 1, 2, configs...)
		p := tc.c.Image().Topics["t"].Partitions[0]
		leader, follower := p.Leader, p.Replicas[1]
		// The leader drops the follower from the ISR.
		resp := tc.alterPartition(3, leader, alterISR("t", p, leader))
		requireErrorCode(t, "shrink", resp.Topics[0].Partitions[0].ErrorCode, nil)
		tc.expire(leader)
		requireLeadershipInvariants(t, tc.c.Image())
		switch {
		case !unclean && (p.Leader != -1 || !slices.Equal(p.ISR, []int32{leader})):
			t.Fatalf("clean: leader %d ISR %v, want leaderless with ISR [%d]", p.Leader, p.ISR, leader)
		case unclean && (p.Leader != follower || !slices.Equal(p.ISR, []int32{follower})):
			t.Fatalf("unclean: leader %d ISR %v, want %d alone", p.Leader, p.ISR, follower)
		}
	}
}

// The runbook for a partition whose in-sync replicas are all down: turning
// unclean.leader.election.enable on elects a replica outside the ISR with
// the change itself, marked as unclean, not at the next broker's return;
// turning it off again elects nobody and leaves the mark.
func TestTurningUncleanElectionOnElectsTheLeaderlessAtOnce(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2)
	p, follower := strandPartition(t, tc)
	epoch := p.LeaderEpoch

	alter := tc.incrementalAlter(false, incremental(topic, "t", metadata.ConfigUncleanLeaderElection, set, "true"))
	requireCode(t, "turn on", alter.Resources[0].ErrorCode, alter.Resources[0].ErrorMessage, nil)
	requireLeadershipInvariants(t, tc.c.Image())
	if p.Leader != follower || !slices.Equal(p.ISR, []int32{follower}) || p.UncleanEpoch != epoch+1 || p.LeaderEpoch != epoch+1 {
		t.Fatalf("after turning it on: leader %d ISR %v epoch %d unclean epoch %d, want %d alone at epoch %d, unclean", p.Leader, p.ISR, p.LeaderEpoch, p.UncleanEpoch, follower, epoch+1)
	}

	alter = tc.incrementalAlter(false, incremental(topic, "t", metadata.ConfigUncleanLeaderElection, set, "false"))
	requireCode(t, "turn off", alter.Resources[0].ErrorCode, alter.Resources[0].ErrorMessage, nil)
	if p.Leader != follower || p.UncleanEpoch != epoch+1 {
		t.Fatalf("after turning it off: leader %d, unclean epoch %d", p.Leader, p.UncleanEpoch)
	}
}

// strandPartition creates topic t, one partition on brokers 1 and 2, and
// leaves it leaderless: its leader drops the follower from the ISR, then
// its session expires. It returns the partition and the follower, the one
// replica left that may lead, from outside the ISR.
func strandPartition(t *testing.T, tc *testController) (*metadata.Partition, int32) {
	t.Helper()
	tc.mustCreate("t", 1, 2)
	p := tc.c.Image().Topics["t"].Partitions[0]
	leader, follower := p.Leader, p.Replicas[1]
	resp := tc.alterPartition(3, leader, alterISR("t", p, leader))
	requireErrorCode(t, "shrink", resp.Topics[0].Partitions[0].ErrorCode, nil)
	tc.expire(leader)
	if p.Leader != -1 || !slices.Equal(p.ISR, []int32{leader}) {
		t.Fatalf("leader %d ISR %v with the ISR's only member gone, want none and [%d]", p.Leader, p.ISR, leader)
	}
	return p, follower
}

func TestWantFenceFencesTheBroker(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2)
	tc.mustCreate("t", 2, 2)
	hb := tc.heartbeat(1, heartbeatOptions{wantFence: true})
	if hb.ErrorCode != 0 || !hb.IsFenced || !tc.c.Image().Brokers[1].Fenced {
		t.Fatalf("heartbeat wanting a fence: %+v", hb)
	}
	requireLeadershipInvariants(t, tc.c.Image())
	for _, p := range tc.c.Image().Topics["t"].Partitions {
		if p.Leader != 2 {
			t.Fatalf("partition %d led by %d after broker 1 fenced itself", p.Index, p.Leader)
		}
	}
}

func TestHeartbeatWithAStaleEpochIsRefused(t *testing.T) {
	tc := newTestController(t, Config{}, 1)
	for _, epoch := range []int64{-1, tc.epochs[1] + 1} {
		hb := tc.heartbeat(1, heartbeatOptions{epoch: epoch})
		if hb.ErrorCode != kerr.StaleBrokerEpoch.Code {
			t.Fatalf("heartbeat at epoch %d: %v", epoch, kerr.ErrorForCode(hb.ErrorCode))
		}
	}
	if hb := tc.heartbeat(9, heartbeatOptions{epoch: 1}); hb.ErrorCode != kerr.StaleBrokerEpoch.Code {
		t.Fatalf("heartbeat of an unregistered broker: %v", kerr.ErrorForCode(hb.ErrorCode))
	}
}

func TestControlledShutdownMovesLeadershipsThenLetsTheBrokerGo(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2, 3)
	tc.mustCreate("replicated", 6, 3)
	tc.mustCreate("single", 3, 1)
	hb := tc.heartbeat(1, heartbeatOptions{wantShutdown: true})
	if hb.ErrorCode != 0 || hb.ShouldShutdown || hb.IsFenced {
		t.Fatalf("first shutdown heartbeat: %+v", hb)
	}
	moved := tc.c.Image().Offset
	requireLeadershipInvariants(t, tc.c.Image())
	for _, name := range []string{"replicated", "single"} {
		for _, p := range tc.c.Image().Topics[name].Partitions {
			if p.Leader == 1 {
				t.Fatalf("%s-%d is still led by the broker shutting down", name, p.Index)
			}
			if slices.Contains(p.ISR, 1) && len(p.ISR) > 1 {
				t.Fatalf("%s-%d keeps the broker shutting down in its ISR %v", name, p.Index, p.ISR)
			}
		}
	}
	// New replicas never go to a broker shutting down.
	for _, p := range tc.mustCreate("later", 4, 2).Partitions {
		if slices.Contains(p.Replicas, 1) {
			t.Fatalf("new partition %d placed on broker 1, which is shutting down", p.Index)
		}
	}
	// Not until it has applied the records that moved its leaderships.
	hb = tc.heartbeat(1, heartbeatOptions{wantShutdown: true, offset: at(moved - 1)})
	if hb.ShouldShutdown {
		t.Fatal("told to shut down before applying its leadership moves")
	}
	hb = tc.heartbeat(1, heartbeatOptions{wantShutdown: true})
	if hb.ErrorCode != 0 || !hb.ShouldShutdown || !hb.IsFenced || !tc.c.Image().Brokers[1].Fenced {
		t.Fatalf("caught-up shutdown heartbeat: %+v", hb)
	}
}

// alterISR builds one partition of an AlterPartition request from its
// current state, asking for the given ISR.
func alterISR(topic string, p *metadata.Partition, isr ...int32) alterPartitionItem {
	return alterPartitionItem{topic: topic, id: p.Topic.ID, partition: p.Index, leaderEpoch: p.LeaderEpoch, partitionEpoch: p.PartitionEpoch, isr: isr}
}

type alterPartitionItem struct {
	topic          string
	id             metadata.TopicID
	partition      int32
	leaderEpoch    int32
	partitionEpoch int32
	isr            []int32
	// epochs overrides the broker epochs sent with the ISR (v3).
	epochs map[int32]int64
}

// alterPartition sends an AlterPartition request as broker sender, each
// item its own topic entry.
func (tc *testController) alterPartition(version int16, sender int32, items ...alterPartitionItem) *kmsg.AlterPartitionResponse {
	tc.t.Helper()
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version = version
	req.BrokerID, req.BrokerEpoch = sender, tc.epochs[sender]
	for _, item := range items {
		rt := kmsg.NewAlterPartitionRequestTopic()
		rt.Topic, rt.TopicID = item.topic, item.id
		rp := kmsg.NewAlterPartitionRequestTopicPartition()
		rp.Partition, rp.LeaderEpoch, rp.PartitionEpoch = item.partition, item.leaderEpoch, item.partitionEpoch
		for _, id := range item.isr {
			if version >= 3 {
				member := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
				member.BrokerID, member.BrokerEpoch = id, tc.epochs[id]
				if epoch, given := item.epochs[id]; given {
					member.BrokerEpoch = epoch
				}
				rp.NewEpochISR = append(rp.NewEpochISR, member)
			} else {
				rp.NewISR = append(rp.NewISR, id)
			}
		}
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	return call(tc.t, func(done func(*kmsg.AlterPartitionResponse)) { tc.c.AlterPartition(req, done) })
}
