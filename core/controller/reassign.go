package controller

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

// Partition reassignment (KIP-455; kafka-reassign-partitions.sh,
// AdminClient.alterPartitionReassignments) moves a partition's replicas to
// other brokers without ever having fewer copies of it than before, as
// KRaft's controller does:
//
//  1. Start: the replicas become the target followed by the current
//     replicas the target drops (RemovingReplicas); the target's new
//     members are AddingReplicas. Every replica, old and new, now fetches
//     from the leader, which stays.
//  2. The leader adds each new replica to the ISR once it has caught up
//     (AlterPartition), as it would any follower.
//  3. Complete: the first change that leaves the whole target in the ISR
//     (usually that AlterPartition; at once when the target adds nobody)
//     sets the replicas to the target and takes the removed ones out of
//     the ISR, and a leader being removed hands over to the first target
//     replica in the ISR that may lead. The removed replicas' brokers then
//     delete their copies (core/broker, partitions.go).
//
// Taking replicas away bumps the leader epoch (elections.go, changeTo), so
// the leader refuses a removed replica's fetches until its broker has
// applied the removal; and that broker cannot renew its lease to serve
// the partition until it has (catch_up.go), while the leader counts the
// removed replica for a session before answering DeleteRecords
// (core/replica, departed.go).
//
// A partition's original replicas are its replicas minus those being
// added, and they stay so however many times the reassignment is
// replaced, so cancelling always brings them back and the replication
// factor never drifts. A new target for a partition being reassigned is
// planned from them: the old target's new members that the new one does
// not want leave at once (they were never needed: the original replicas
// stay until the new target holds the data), unless they are the whole
// ISR, when the request is refused (ELIGIBLE_LEADERS_NOT_AVAILABLE: wait
// for the reassignment in progress). Cancelling drops every member being
// added, refused likewise while they are the whole ISR (Kafka would elect
// uncleanly from the rest and lose what only the new members have).

// AlterPartitionReassignments answers AlterPartitionReassignments (key 45),
// one answer per partition, the first rule broken:
//
//   - unknown topic or partition: UNKNOWN_TOPIC_OR_PARTITION;
//   - a partition named twice: INVALID_REQUEST;
//   - a target that is empty, names a broker twice, or names a broker
//     that is not registered: INVALID_REPLICA_ASSIGNMENT;
//   - (v1, KIP-1074) a target of another size when the request does not
//     allow the replication factor to change: INVALID_REPLICATION_FACTOR;
//   - a cancellation (null replicas) of a partition not being reassigned:
//     NO_REASSIGNMENT_IN_PROGRESS; of one whose ISR holds only the
//     replicas it was adding: ELIGIBLE_LEADERS_NOT_AVAILABLE.
//
// A target equal to the current replicas changes nothing and succeeds.
// The accepted changes are one proposal, answered once it commits; more
// than recordsPerOperationMax of them at once is INVALID_REQUEST.
func (c *Controller) AlterPartitionReassignments(req *kmsg.AlterPartitionAssignmentsRequest, done func(*kmsg.AlterPartitionAssignmentsResponse)) {
	c.submitAdmin(func() ([]metadata.Record, func(*failure)) {
		failures, records := c.planReassignments(req)
		return records, func(outcome *failure) { done(reassignmentsAnswer(req, failures, outcome)) }
	}, func(f *failure) {
		resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
		resp.ErrorCode, resp.ErrorMessage = f.errorCode(), f.messagePointer()
		done(resp)
	})
}

// planReassignments judges every partition of the request and returns
// their failures (nil for accepted ones), by topic and partition index in
// the request, and the changes.
func (c *Controller) planReassignments(req *kmsg.AlterPartitionAssignmentsRequest) ([][]*failure, []metadata.Record) {
	view := candidates{c: c, leaving: -1, joining: -1}
	seen := map[*metadata.Partition]bool{}
	var failures [][]*failure
	var records []metadata.Record
	for _, rt := range req.Topics {
		topicFailures := make([]*failure, len(rt.Partitions))
		for i, rp := range rt.Partitions {
			t, ok := c.image.Topics[rt.Topic]
			if !ok || rp.Partition < 0 || int(rp.Partition) >= len(t.Partitions) {
				topicFailures[i] = fail(kerr.UnknownTopicOrPartition, "no partition %d of topic %q", rp.Partition, rt.Topic)
				continue
			}
			p := t.Partitions[rp.Partition]
			if seen[p] {
				topicFailures[i] = fail(kerr.InvalidRequest, "%s-%d is named more than once in the request", t.Name, p.Index)
				continue
			}
			seen[p] = true
			var state partitionTarget
			var f *failure
			if rp.Replicas == nil {
				state, f = c.planCancellation(p, view)
			} else {
				state, f = c.planReassignment(req, p, rp.Replicas, view)
			}
			if f != nil {
				topicFailures[i] = f
				continue
			}
			if record, changed := c.changeTo(p, state, view); changed {
				records = append(records, record)
			}
		}
		failures = append(failures, topicFailures)
	}
	if len(records) > recordsPerOperationMax {
		tooMany := fail(kerr.InvalidRequest, "the request reassigns %d partitions, more than %d at once; name fewer", len(records), recordsPerOperationMax)
		for _, topicFailures := range failures {
			for i := range topicFailures {
				if topicFailures[i] == nil {
					topicFailures[i] = tooMany
				}
			}
		}
		records = nil
	}
	return failures, records
}

// planReassignment checks target and returns the state that starts
// moving p to it (step 1 above).
func (c *Controller) planReassignment(req *kmsg.AlterPartitionAssignmentsRequest, p *metadata.Partition, target []int32, view candidates) (partitionTarget, *failure) {
	name := p.Topic.Name
	if len(target) == 0 {
		return partitionTarget{}, fail(kerr.InvalidReplicaAssignment, "%s-%d: the target replica list is empty", name, p.Index)
	}
	for i, id := range target {
		if slices.Contains(target[:i], id) {
			return partitionTarget{}, fail(kerr.InvalidReplicaAssignment, "%s-%d: the target %v names broker %d twice", name, p.Index, target, id)
		}
		if _, registered := c.image.Brokers[id]; !registered {
			return partitionTarget{}, fail(kerr.InvalidReplicaAssignment, "%s-%d: the target %v names broker %d, which is not registered", name, p.Index, target, id)
		}
	}
	if current := len(p.TargetReplicas()); req.Version >= 1 && !req.AllowReplicationFactorChange && len(target) != current {
		return partitionTarget{}, fail(kerr.InvalidReplicationFactor,
			"%s-%d: the target %v changes the replication factor from %d to %d, and the request does not allow it", name, p.Index, target, current, len(target))
	}
	original := minus(p.Replicas, p.AddingReplicas)
	dropped := minus(p.AddingReplicas, target)
	state := partitionTarget{leader: p.Leader, isr: minus(p.ISR, dropped), replicas: slices.Clone(target)}
	if len(state.isr) == 0 {
		return partitionTarget{}, fail(kerr.EligibleLeadersNotAvailable,
			"%s-%d: its ISR %v holds only replicas the reassignment in progress adds and the new target %v drops; wait for it to complete", name, p.Index, p.ISR, target)
	}
	state.removing = minus(original, target)
	state.replicas = append(state.replicas, state.removing...)
	state.adding = minus(target, original)
	if slices.Contains(dropped, state.leader) {
		state.leader = firstEligible(state.replicas, state.isr, view)
	}
	if len(state.adding) > 0 || len(state.removing) > 0 || len(dropped) > 0 {
		c.log.Info("partition reassignment started", "topic", name, "partition", p.Index,
			"replicas", p.Replicas, "target", target, "adding", state.adding, "removing", state.removing, "dropping", dropped)
	}
	return state, nil
}

// planCancellation returns the state that gives up p's reassignment: the
// replicas it was adding go, the others stay.
func (c *Controller) planCancellation(p *metadata.Partition, view candidates) (partitionTarget, *failure) {
	name := p.Topic.Name
	if !p.Reassigning() {
		return partitionTarget{}, fail(kerr.NoReassignmentInProgress, "%s-%d is not being reassigned", name, p.Index)
	}
	state := partitionTarget{leader: p.Leader, replicas: minus(p.Replicas, p.AddingReplicas), isr: minus(p.ISR, p.AddingReplicas)}
	if len(state.isr) == 0 {
		return partitionTarget{}, fail(kerr.EligibleLeadersNotAvailable,
			"%s-%d: its ISR %v holds only replicas the reassignment adds; cancelling would lose what only they have (wait for it to complete)", name, p.Index, p.ISR)
	}
	if state.leader < 0 || slices.Contains(p.AddingReplicas, state.leader) {
		state.leader = firstEligible(state.replicas, state.isr, view)
	}
	c.log.Info("partition reassignment cancelled", "topic", name, "partition", p.Index, "replicas", state.replicas, "dropping", p.AddingReplicas)
	return state, nil
}

// completeReassignment completes the reassignment s carries if s's ISR
// holds its whole target (step 3 above), and returns s as it then is.
func (c *Controller) completeReassignment(p *metadata.Partition, s partitionTarget, view candidates) partitionTarget {
	if len(s.adding) == 0 && len(s.removing) == 0 {
		return s
	}
	target := minus(s.replicas, s.removing)
	if c.w.Canaries.On(CanaryReassignBeforeCaughtUp) {
		s.isr = append(slices.Clone(s.isr), minus(target, s.isr)...)
	}
	for _, id := range target {
		if !slices.Contains(s.isr, id) {
			return s
		}
	}
	isr := minus(s.isr, s.removing)
	done := partitionTarget{leader: s.leader, isr: isr, replicas: target}
	if done.leader >= 0 && !slices.Contains(target, done.leader) {
		done.leader = firstEligible(target, isr, view)
	}
	c.eventLogger().Info(ReassignmentCompletedMessage, "topic", p.Topic.Name, "partition", p.Index,
		"replicas", target, "removed", s.removing, "leader", done.leader)
	return done
}

// ReassignmentCompletedMessage is what the controller logs when it
// proposes a reassignment's completion; the simulator counts these lines.
const ReassignmentCompletedMessage = "partition reassignment completed"

// firstEligible is the first of replicas, in order, that is in isr and
// may lead; -1 if none.
func firstEligible(replicas, isr []int32, view candidates) int32 {
	for _, id := range replicas {
		if slices.Contains(isr, id) && view.mayLead(id) {
			return id
		}
	}
	return -1
}

// reassignmentsAnswer builds the answer: each partition's failure, or the
// proposal's outcome.
func reassignmentsAnswer(req *kmsg.AlterPartitionAssignmentsRequest, failures [][]*failure, outcome *failure) *kmsg.AlterPartitionAssignmentsResponse {
	resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	resp.AllowReplicationFactorChange = req.AllowReplicationFactorChange
	for i, rt := range req.Topics {
		at := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		at.Topic = rt.Topic
		for j, rp := range rt.Partitions {
			ap := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			ap.Partition = rp.Partition
			f := failures[i][j]
			if f == nil {
				f = outcome
			}
			ap.ErrorCode, ap.ErrorMessage = f.errorCode(), f.messagePointer()
			at.Partitions = append(at.Partitions, ap)
		}
		resp.Topics = append(resp.Topics, at)
	}
	return resp
}

// ListPartitionReassignments answers ListPartitionReassignments (key 46):
// the reassignments in progress among the partitions named, or among all
// when none are (null topics). Partitions not being reassigned, and unknown
// ones, are left out, as Kafka's controller does. The answer comes from the
// image once a no-op commits, so a deposed controller cannot answer.
func (c *Controller) ListPartitionReassignments(req *kmsg.ListPartitionReassignmentsRequest, done func(*kmsg.ListPartitionReassignmentsResponse)) {
	c.submitAdmin(func() ([]metadata.Record, func(*failure)) {
		return nil, func(outcome *failure) {
			resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
			if outcome != nil {
				resp.ErrorCode, resp.ErrorMessage = outcome.errorCode(), outcome.messagePointer()
			} else {
				resp.Topics = c.listReassignments(req)
			}
			done(resp)
		}
	}, func(f *failure) {
		resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
		resp.ErrorCode, resp.ErrorMessage = f.errorCode(), f.messagePointer()
		done(resp)
	})
}

func (c *Controller) listReassignments(req *kmsg.ListPartitionReassignmentsRequest) []kmsg.ListPartitionReassignmentsResponseTopic {
	var topics []kmsg.ListPartitionReassignmentsResponseTopic
	list := func(t *metadata.Topic, indexes []int32) {
		at := kmsg.NewListPartitionReassignmentsResponseTopic()
		at.Topic = t.Name
		for i, index := range indexes {
			if index < 0 || int(index) >= len(t.Partitions) || slices.Contains(indexes[:i], index) {
				continue
			}
			p := t.Partitions[index]
			if !p.Reassigning() {
				continue
			}
			ap := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
			ap.Partition = p.Index
			ap.Replicas = slices.Clone(p.Replicas)
			ap.AddingReplicas = nonNil(p.AddingReplicas)
			ap.RemovingReplicas = nonNil(p.RemovingReplicas)
			at.Partitions = append(at.Partitions, ap)
		}
		if len(at.Partitions) > 0 {
			topics = append(topics, at)
		}
	}
	if req.Topics == nil {
		for _, name := range c.image.TopicNames() {
			t := c.image.Topics[name]
			indexes := make([]int32, len(t.Partitions))
			for i := range indexes {
				indexes[i] = int32(i)
			}
			list(t, indexes)
		}
		return topics
	}
	for _, rt := range req.Topics {
		if t, ok := c.image.Topics[rt.Topic]; ok {
			list(t, rt.Partitions)
		}
	}
	return topics
}

// nonNil returns ids, or an empty list for nil: the protocol's lists are
// not nullable.
func nonNil(ids []int32) []int32 {
	if ids == nil {
		return []int32{}
	}
	return slices.Clone(ids)
}
