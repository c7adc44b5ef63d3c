package controller

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"

	"sluice/core/metadata"
)

// reassign sends AlterPartitionReassignments for one partition (nil
// target: cancel), allowing the replication factor to change, and returns
// the partition's answer.
func (tc *testController) reassign(topic string, partition int32, target []int32) kmsg.AlterPartitionAssignmentsResponseTopicPartition {
	tc.t.Helper()
	req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
	rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
	rp.Partition, rp.Replicas = partition, target
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := call(tc.t, func(done func(*kmsg.AlterPartitionAssignmentsResponse)) { tc.c.AlterPartitionReassignments(req, done) })
	if resp.ErrorCode != 0 {
		tc.t.Fatalf("reassignment refused as a whole: %v", kerr.ErrorForCode(resp.ErrorCode))
	}
	return resp.Topics[0].Partitions[0]
}

func TestAReassignmentCompletesWhenTheTargetIsInTheISR(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2, 3, 4)
	p := tc.mustCreate("t", 1, 2).Partitions[0]
	original := slices.Clone(p.Replicas)
	var target []int32
	for _, id := range []int32{1, 2, 3, 4} {
		if !slices.Contains(original, id) {
			target = append(target, id)
		}
	}
	answer := tc.reassign("t", 0, target)
	requireCode(t, "reassign", answer.ErrorCode, answer.ErrorMessage, nil)
	if want := append(slices.Clone(target), original...); !slices.Equal(p.Replicas, want) ||
		!slices.Equal(p.AddingReplicas, target) || !slices.Equal(p.RemovingReplicas, original) || p.Leader != original[0] {
		t.Fatalf("started: replicas %v adding %v removing %v leader %d; want %v, %v, %v, %d",
			p.Replicas, p.AddingReplicas, p.RemovingReplicas, p.Leader, want, target, original, original[0])
	}

	// One new member caught up: not yet complete.
	leader := p.Leader
	tc.alterPartition(3, leader, alterISR("t", p, append(slices.Clone(p.ISR), target[0])...))
	if !p.Reassigning() || p.Leader != leader {
		t.Fatalf("completed with %v of the target %v in the ISR %v", target[:1], target, p.ISR)
	}
	// The other one: the target is in the ISR, the old replicas go and
	// the leader, one of them, hands over to the target's first.
	tc.alterPartition(3, leader, alterISR("t", p, append(slices.Clone(p.ISR), target[1])...))
	if p.Reassigning() || !slices.Equal(p.Replicas, target) || !slices.Equal(p.ISR, target) || p.Leader != target[0] {
		t.Fatalf("completed: replicas %v ISR %v leader %d adding %v removing %v; want %v, %v, %d",
			p.Replicas, p.ISR, p.Leader, p.AddingReplicas, p.RemovingReplicas, target, target, target[0])
	}
}

func TestAReplacedReassignmentKeepsTheOriginalReplicas(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2, 3, 4, 5)
	p := tc.mustCreate("t", 1, 2).Partitions[0]
	original := slices.Clone(p.Replicas)
	others := slices.DeleteFunc([]int32{1, 2, 3, 4, 5}, func(id int32) bool { return slices.Contains(original, id) })

	requireCode(t, "first", tc.reassign("t", 0, others[:2]).ErrorCode, nil, nil)
	// A member of the first target joins the ISR, then a second target
	// replaces the first: the first's members it does not want go at
	// once, the ISR with them, and the original replicas stay the base.
	tc.alterPartition(3, p.Leader, alterISR("t", p, append(slices.Clone(p.ISR), others[0])...))
	second := []int32{original[0], others[2]}
	requireCode(t, "second", tc.reassign("t", 0, second).ErrorCode, nil, nil)
	if want := []int32{original[0], others[2], original[1]}; !slices.Equal(p.Replicas, want) ||
		!slices.Equal(p.AddingReplicas, others[2:3]) || !slices.Equal(p.RemovingReplicas, original[1:]) ||
		slices.Contains(p.ISR, others[0]) {
		t.Fatalf("second: replicas %v adding %v removing %v ISR %v; want %v, %v, %v, without %d",
			p.Replicas, p.AddingReplicas, p.RemovingReplicas, p.ISR, want, others[2:3], original[1:], others[0])
	}
	// Cancelling brings back exactly the original replicas.
	requireCode(t, "cancel", tc.reassign("t", 0, nil).ErrorCode, nil, nil)
	if !slices.Equal(p.Replicas, original) || p.Reassigning() {
		t.Fatalf("cancelled: replicas %v adding %v removing %v; want %v", p.Replicas, p.AddingReplicas, p.RemovingReplicas, original)
	}
	again := tc.reassign("t", 0, nil)
	requireCode(t, "cancel again", again.ErrorCode, again.ErrorMessage, kerr.NoReassignmentInProgress)
}

func TestCancellingIsRefusedWhileOnlyNewMembersAreInSync(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2, 3)
	p := tc.mustCreate("t", 1, 1).Partitions[0]
	original := p.Replicas[0]
	others := slices.DeleteFunc([]int32{1, 2, 3}, func(id int32) bool { return id == original })
	requireCode(t, "reassign", tc.reassign("t", 0, others).ErrorCode, nil, nil)
	// The first new member caught up; then the original replica is
	// fenced, which leaves the new member alone in the ISR, leading.
	tc.alterPartition(3, original, alterISR("t", p, original, others[0]))
	tc.expire(original)
	if p.Leader != others[0] || !slices.Equal(p.ISR, others[:1]) || !p.Reassigning() {
		t.Fatalf("after the fence: leader %d ISR %v reassigning %v", p.Leader, p.ISR, p.Reassigning())
	}
	before := *p
	answer := tc.reassign("t", 0, nil)
	requireCode(t, "cancel with only new members in sync", answer.ErrorCode, answer.ErrorMessage, kerr.EligibleLeadersNotAvailable)
	answer = tc.reassign("t", 0, []int32{original, others[1]})
	requireCode(t, "a new target dropping them all", answer.ErrorCode, answer.ErrorMessage, kerr.EligibleLeadersNotAvailable)
	if !slices.Equal(p.Replicas, before.Replicas) || !slices.Equal(p.ISR, before.ISR) || p.PartitionEpoch != before.PartitionEpoch {
		t.Fatalf("refusals changed the partition: %+v, was %+v", p, before)
	}
}

// Whatever sequence of reassignments, cancellations, ISR changes and
// fences, a partition keeps its promises: its replicas without those
// being added are its original ones until a reassignment completes, the
// replication factor of its target never drifts, its ISR is never empty,
// never outside its replicas, and a reassignment completes only with its
// whole target in the ISR.
func TestReassignmentsKeepTheirPromises(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		brokers := []int32{1, 2, 3, 4, 5}
		tc := newTestController(rt, Config{}, brokers...)
		p := tc.mustCreate("t", 1, 3).Partitions[0]
		original := slices.Clone(p.Replicas)
		for step := range rapid.IntRange(1, 30).Draw(rt, "steps") {
			wasReassigning := slices.Clone(p.TargetReplicas())
			switch rapid.IntRange(0, 3).Draw(rt, "action") {
			case 0:
				target := rapid.Permutation(brokers).Draw(rt, "order")[:3]
				tc.reassign("t", 0, target)
			case 1:
				tc.reassign("t", 0, nil)
			case 2: // the leader adds a live replica to the ISR
				if p.Leader < 0 {
					continue
				}
				candidates := slices.DeleteFunc(slices.Clone(p.Replicas), func(id int32) bool {
					return slices.Contains(p.ISR, id) || tc.c.Image().Brokers[id].Fenced
				})
				if len(candidates) == 0 {
					continue
				}
				joining := rapid.SampledFrom(candidates).Draw(rt, "joining")
				tc.alterPartition(3, p.Leader, alterISR("t", p, append(slices.Clone(p.ISR), joining)...))
				if !p.Reassigning() && !slices.Equal(p.Replicas, wasReassigning) && len(wasReassigning) > 0 {
					rt.Fatalf("step %d: completed to %v, not the target %v", step, p.Replicas, wasReassigning)
				}
			case 3: // a broker fenced, or back
				id := rapid.SampledFrom(brokers).Draw(rt, "broker")
				if tc.c.Image().Brokers[id].Fenced {
					tc.heartbeat(id, heartbeatOptions{})
				} else {
					tc.expire(id)
				}
			}
			if !p.Reassigning() {
				original = slices.Clone(p.Replicas)
			}
			// The same members; their order is the reassignment's (a
			// cancelled one leaves its target's order, as Kafka's).
			if got := minus(p.Replicas, p.AddingReplicas); !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(original))) {
				rt.Fatalf("step %d: the original replicas are %v, were %v (replicas %v adding %v)", step, got, original, p.Replicas, p.AddingReplicas)
			}
			if len(p.TargetReplicas()) != 3 || len(original) != 3 {
				rt.Fatalf("step %d: replication factor drifted: target %v original %v", step, p.TargetReplicas(), original)
			}
			if len(p.ISR) == 0 || len(minus(p.ISR, p.Replicas)) != 0 || (p.Leader >= 0 && !slices.Contains(p.ISR, p.Leader)) {
				rt.Fatalf("step %d: ISR %v, replicas %v, leader %d", step, p.ISR, p.Replicas, p.Leader)
			}
			checkImageReassignment(rt, p)
		}
	})
}

// checkImageReassignment checks a reassignment's sets are what the
// metadata says they must be.
func checkImageReassignment(t *rapid.T, p *metadata.Partition) {
	if len(minus(p.AddingReplicas, p.Replicas)) != 0 || len(minus(p.RemovingReplicas, p.Replicas)) != 0 ||
		len(minus(p.AddingReplicas, minus(p.AddingReplicas, p.RemovingReplicas))) != 0 {
		t.Fatalf("replicas %v adding %v removing %v", p.Replicas, p.AddingReplicas, p.RemovingReplicas)
	}
}

// Partitions added while partition 0 is being reassigned take its target's
// replication factor, not its replica count of the moment.
func TestPartitionsAddedDuringAReassignmentKeepTheReplicationFactor(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2, 3, 4)
	p := tc.mustCreate("t", 1, 2).Partitions[0]
	target := slices.DeleteFunc([]int32{1, 2, 3, 4}, func(id int32) bool { return slices.Contains(p.Replicas, id) })
	requireCode(t, "reassign", tc.reassign("t", 0, target).ErrorCode, nil, nil)
	if len(p.Replicas) != 4 {
		t.Fatalf("reassigning: replicas %v, want 4 of them", p.Replicas)
	}
	resp := tc.createPartitions(false, growTo("t", 3))
	requireCode(t, "grow", resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage, nil)
	for _, added := range tc.c.Image().Topics["t"].Partitions[1:] {
		if len(added.Replicas) != 2 {
			t.Fatalf("partition %d added with replicas %v; want 2 of them", added.Index, added.Replicas)
		}
	}
}

// Taking a replica away bumps the leader epoch, the leader staying: the
// leader then fences the fetches of the removed replica, whose broker may
// not yet know it was removed (and, added back meanwhile, could otherwise
// join the ISR on a log it is about to delete).
func TestRemovingAReplicaBumpsTheLeaderEpoch(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2, 3)
	p := tc.mustCreate("t", 1, 3).Partitions[0]
	leader, epoch := p.Leader, p.LeaderEpoch
	kept := []int32{leader}
	for _, id := range p.Replicas {
		if id != leader && len(kept) < 2 {
			kept = append(kept, id)
		}
	}
	requireCode(t, "shrink", tc.reassign("t", 0, kept).ErrorCode, nil, nil)
	if p.Reassigning() || !slices.Equal(p.Replicas, kept) || p.Leader != leader || p.LeaderEpoch != epoch+1 {
		t.Fatalf("after removing a replica: replicas %v leader %d epoch %d; want %v, %d, %d", p.Replicas, p.Leader, p.LeaderEpoch, kept, leader, epoch+1)
	}
	// Adding one back changes no epoch of the leader's.
	requireCode(t, "grow", tc.reassign("t", 0, []int32{1, 2, 3}).ErrorCode, nil, nil)
	if p.LeaderEpoch != epoch+1 {
		t.Fatalf("adding a replica moved the leader epoch to %d", p.LeaderEpoch)
	}
}

// An unclean election during a reassignment takes an original replica
// before one being added, which may hold little or nothing yet.
func TestAnUncleanElectionPrefersTheOriginalReplicas(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2, 3, 4)
	p := tc.mustCreate("t", 1, 2, metadata.ConfigUncleanLeaderElection, "true").Partitions[0]
	original := slices.Clone(p.Replicas)
	adding := slices.DeleteFunc([]int32{1, 2, 3, 4}, func(id int32) bool { return slices.Contains(original, id) })
	requireCode(t, "reassign", tc.reassign("t", 0, adding).ErrorCode, nil, nil)
	// The ISR shrinks to one original replica, which then goes.
	tc.alterPartition(3, p.Leader, alterISR("t", p, p.Leader))
	outside := original[0]
	if outside == p.Leader {
		outside = original[1]
	}
	tc.expire(p.Leader)
	if !slices.Contains(original, p.Leader) || p.Leader != outside {
		t.Fatalf("unclean election during a reassignment chose %d (replicas %v, adding %v); want the original %d", p.Leader, p.Replicas, p.AddingReplicas, outside)
	}
}

// A broker a reassignment took a replica from is not caught up until its
// heartbeat shows the removal applied: it may not renew its lease before
// (core/broker, lifecycle.go), since it may still believe it hosts, and
// leads, the partition.
func TestABrokerIsNotCaughtUpUntilItAppliedItsReplicasRemoval(t *testing.T) {
	tc := newTestController(t, Config{}, 1, 2, 3)
	p := tc.mustCreate("t", 1, 2).Partitions[0]
	removed := p.Replicas[1]
	before := tc.c.Image().Offset
	requireCode(t, "reassign", tc.reassign("t", 0, p.Replicas[:1]).ErrorCode, nil, nil)
	if p.Reassigning() || slices.Contains(p.Replicas, removed) {
		t.Fatalf("not completed: replicas %v", p.Replicas)
	}
	if resp := tc.heartbeat(removed, heartbeatOptions{offset: at(before)}); resp.IsFenced || resp.IsCaughtUp {
		t.Fatalf("broker %d, its image before the removal: fenced %v caught up %v; want unfenced and not caught up", removed, resp.IsFenced, resp.IsCaughtUp)
	}
	if resp := tc.heartbeat(removed, heartbeatOptions{}); resp.IsFenced || !resp.IsCaughtUp {
		t.Fatalf("broker %d, its image at the end: fenced %v caught up %v; want unfenced and caught up", removed, resp.IsFenced, resp.IsCaughtUp)
	}
}
