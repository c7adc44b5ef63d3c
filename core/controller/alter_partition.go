package controller

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

// AlterPartition answers AlterPartition (KIP-497; versions 0-3): a
// partition's leader asks to change its ISR, shrinking it when a follower
// falls behind and growing it when one catches up. The request names the
// partition state it is based on; anything stale is refused, so two
// changes can never be made from the same state. Per partition, the first
// rule broken is the answer:
//
//   - epochs ahead of the image's: NOT_CONTROLLER (this controller is
//     behind; the leader looks for the active one);
//   - the sender does not lead the partition: NOT_LEADER_OR_FOLLOWER;
//   - another leader epoch: FENCED_LEADER_EPOCH;
//   - another partition epoch (the state changed since the leader read
//     it): INVALID_UPDATE_VERSION;
//   - a LeaderRecoveryState other than RECOVERED, a member named twice,
//     or a member that is not a replica: INVALID_REQUEST;
//   - an ISR without the leader, or with a broker that is unregistered,
//     fenced or shutting down, or (v3, KIP-903) whose broker epoch in the
//     request is not its registered one (a replica that restarted since
//     the leader saw it caught up): INELIGIBLE_REPLICA.
//
// A sender not registered at its epoch gets STALE_BROKER_EPOCH for the
// whole request; an unknown topic UNKNOWN_TOPIC_OR_PARTITION (by name,
// v0-1) or UNKNOWN_TOPIC_ID (v2+). Accepted changes are one proposal of
// PartitionChangeRecords; each accepted partition is answered with its
// state after the commit (leader, leader epoch, ISR, partition epoch), and
// an ISR that is already the current one is answered at once.
func (c *Controller) AlterPartition(req *kmsg.AlterPartitionRequest, done func(*kmsg.AlterPartitionResponse)) {
	c.submit(func() ([]metadata.Record, func(*failure)) {
		plan := c.planAlterPartition(req)
		return plan.records, func(outcome *failure) { done(plan.answer(c.image, outcome)) }
	}, func(f *failure) {
		plan := alterPartitionPlan{request: req, topLevel: f}
		done(plan.answer(c.image, nil))
	})
}

// alterPartitionPlan is what an AlterPartition request will do.
type alterPartitionPlan struct {
	request  *kmsg.AlterPartitionRequest
	topLevel *failure
	// failures holds each partition's refusal, by topic and partition
	// index in the request; nil for an accepted one.
	failures [][]*failure
	// partitions holds the metadata of each accepted partition.
	partitions [][]*metadata.Partition
	records    []metadata.Record
}

func (c *Controller) planAlterPartition(req *kmsg.AlterPartitionRequest) alterPartitionPlan {
	plan := alterPartitionPlan{request: req}
	if _, refused := c.registeredAt(req.BrokerID, req.BrokerEpoch); refused != nil {
		plan.topLevel = refused
		return plan
	}
	seen := map[*metadata.Partition]bool{}
	view := candidates{c: c, leaving: -1, joining: -1}
	for _, rt := range req.Topics {
		topicFailures := make([]*failure, len(rt.Partitions))
		topicPartitions := make([]*metadata.Partition, len(rt.Partitions))
		t := c.alterPartitionTopic(req.Version, rt)
		for i, rp := range rt.Partitions {
			var p *metadata.Partition
			switch {
			case t == nil && req.Version >= 2:
				topicFailures[i] = fail(kerr.UnknownTopicID, "no topic has id %s", metadata.TopicID(rt.TopicID))
				continue
			case t == nil:
				topicFailures[i] = fail(kerr.UnknownTopicOrPartition, "topic %q does not exist", rt.Topic)
				continue
			case rp.Partition < 0 || int(rp.Partition) >= len(t.Partitions):
				topicFailures[i] = fail(kerr.UnknownTopicOrPartition, "topic %q has no partition %d", t.Name, rp.Partition)
				continue
			default:
				p = t.Partitions[rp.Partition]
			}
			if seen[p] {
				topicFailures[i] = fail(kerr.InvalidRequest, "%s-%d is named more than once in the request", t.Name, p.Index)
				continue
			}
			seen[p] = true
			isr, f := c.checkAlterPartition(req, p, rp)
			if f != nil {
				topicFailures[i] = f
				continue
			}
			topicPartitions[i] = p
			if record, changed := c.partitionChange(p, p.Leader, isr, view); changed {
				plan.records = append(plan.records, record)
			}
		}
		plan.failures = append(plan.failures, topicFailures)
		plan.partitions = append(plan.partitions, topicPartitions)
	}
	if len(plan.records) > recordsPerOperationMax {
		plan = alterPartitionPlan{request: req, topLevel: fail(kerr.InvalidRequest,
			"the request changes %d partitions, more than %d at once", len(plan.records), recordsPerOperationMax)}
	}
	return plan
}

// alterPartitionTopic finds a request's topic: by name before v2, by id
// from v2.
func (c *Controller) alterPartitionTopic(version int16, rt kmsg.AlterPartitionRequestTopic) *metadata.Topic {
	if version >= 2 {
		return c.image.TopicsByID[metadata.TopicID(rt.TopicID)]
	}
	return c.image.Topics[rt.Topic]
}

// checkAlterPartition applies the rules of AlterPartition to one partition
// and returns the new ISR.
func (c *Controller) checkAlterPartition(req *kmsg.AlterPartitionRequest, p *metadata.Partition, rp kmsg.AlterPartitionRequestTopicPartition) ([]int32, *failure) {
	name := p.Topic.Name
	switch {
	case rp.LeaderEpoch > p.LeaderEpoch || rp.PartitionEpoch > p.PartitionEpoch:
		return nil, fail(kerr.NotController, "%s-%d: the request is at leader epoch %d, partition epoch %d, ahead of this controller's %d, %d",
			name, p.Index, rp.LeaderEpoch, rp.PartitionEpoch, p.LeaderEpoch, p.PartitionEpoch)
	case p.Leader != req.BrokerID:
		return nil, fail(kerr.NotLeaderForPartition, "%s-%d is led by %d, not by broker %d", name, p.Index, p.Leader, req.BrokerID)
	case rp.LeaderEpoch != p.LeaderEpoch:
		return nil, fail(kerr.FencedLeaderEpoch, "%s-%d is at leader epoch %d, not %d", name, p.Index, p.LeaderEpoch, rp.LeaderEpoch)
	case rp.PartitionEpoch != p.PartitionEpoch:
		return nil, fail(kerr.InvalidUpdateVersion, "%s-%d is at partition epoch %d, not %d", name, p.Index, p.PartitionEpoch, rp.PartitionEpoch)
	case rp.LeaderRecoveryState != 0:
		return nil, fail(kerr.InvalidRequest, "%s-%d: leader recovery state %d is not supported (only 0, RECOVERED)", name, p.Index, rp.LeaderRecoveryState)
	}
	type member struct {
		id    int32
		epoch int64 // -1 when the request does not say
	}
	var members []member
	if req.Version >= 3 {
		for _, m := range rp.NewEpochISR {
			members = append(members, member{id: m.BrokerID, epoch: m.BrokerEpoch})
		}
	} else {
		for _, id := range rp.NewISR {
			members = append(members, member{id: id, epoch: -1})
		}
	}
	isr := make([]int32, 0, len(members))
	for _, m := range members {
		broker, registered := c.image.Brokers[m.id]
		switch {
		case slices.Contains(isr, m.id):
			return nil, fail(kerr.InvalidRequest, "%s-%d: the new ISR names broker %d twice", name, p.Index, m.id)
		case !slices.Contains(p.Replicas, m.id):
			return nil, fail(kerr.InvalidRequest, "%s-%d: broker %d in the new ISR is not a replica (replicas %v)", name, p.Index, m.id, p.Replicas)
		case !registered:
			return nil, fail(kerr.IneligibleReplica, "%s-%d: broker %d in the new ISR is not registered", name, p.Index, m.id)
		case broker.Fenced:
			return nil, fail(kerr.IneligibleReplica, "%s-%d: broker %d in the new ISR is fenced", name, p.Index, m.id)
		case c.isShuttingDown(m.id):
			return nil, fail(kerr.IneligibleReplica, "%s-%d: broker %d in the new ISR is shutting down", name, p.Index, m.id)
		case m.epoch != -1 && m.epoch != broker.Epoch:
			return nil, fail(kerr.IneligibleReplica, "%s-%d: broker %d in the new ISR is at epoch %d, not %d (it restarted)",
				name, p.Index, m.id, broker.Epoch, m.epoch)
		}
		isr = append(isr, m.id)
	}
	if !slices.Contains(isr, p.Leader) {
		return nil, fail(kerr.IneligibleReplica, "%s-%d: the new ISR %v does not include the leader %d", name, p.Index, isr, p.Leader)
	}
	return isr, nil
}

// answer builds the response from the image after the commit; outcome is
// the commit's.
func (plan alterPartitionPlan) answer(img *metadata.Image, outcome *failure) *kmsg.AlterPartitionResponse {
	req := plan.request
	resp := req.ResponseKind().(*kmsg.AlterPartitionResponse)
	if plan.topLevel != nil {
		resp.ErrorCode = plan.topLevel.errorCode()
		return resp
	}
	for i, rt := range req.Topics {
		answer := kmsg.NewAlterPartitionResponseTopic()
		answer.Topic, answer.TopidID = rt.Topic, rt.TopicID
		for j, rp := range rt.Partitions {
			ap := kmsg.NewAlterPartitionResponseTopicPartition()
			ap.Partition = rp.Partition
			f := plan.failures[i][j]
			if f == nil {
				f = outcome
			}
			if f != nil {
				ap.ErrorCode = f.errorCode()
				answer.Partitions = append(answer.Partitions, ap)
				continue
			}
			// The partition as the commit left it: the same object,
			// updated in place by the image.
			p := plan.partitions[i][j]
			ap.LeaderID, ap.LeaderEpoch, ap.PartitionEpoch = p.Leader, p.LeaderEpoch, p.PartitionEpoch
			ap.ISR = slices.Clone(p.ISR)
			answer.Partitions = append(answer.Partitions, ap)
		}
		resp.Topics = append(resp.Topics, answer)
	}
	return resp
}
