package controller

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

// ElectLeaders answers ElectLeaders (KIP-460; kafka-leader-election.sh),
// one answer per partition:
//
//   - PREFERRED (type 0, and every v0 request): the partition's first
//     replica, its preferred leader, takes over if it is in the ISR and may
//     lead (registered, unfenced, not shutting down): a clean election, as
//     after a rolling restart left the leaders on the nodes that stayed up.
//     Already its leader: ELECTION_NOT_NEEDED; otherwise
//     PREFERRED_LEADER_NOT_AVAILABLE.
//   - UNCLEAN (type 1): a leaderless partition gets a leader, from the ISR
//     if a member may lead, else from outside it whatever the topic's
//     unclean.leader.election.enable says (the operator asked for exactly
//     that), marked unclean in the metadata. A partition with a leader:
//     ELECTION_NOT_NEEDED; nobody may lead: ELIGIBLE_LEADERS_NOT_AVAILABLE.
//
// An unknown topic or partition is UNKNOWN_TOPIC_OR_PARTITION; a partition
// named twice is answered once. With no topics named (null), every
// partition is considered and those that need no election are left out of
// the answer, as Kafka's controller does. The changes are one proposal; if
// it fails, every partition it would have changed answers the failure. A
// request needing more than recordsPerOperationMax elections is refused
// (INVALID_REQUEST): name fewer partitions.
func (c *Controller) ElectLeaders(req *kmsg.ElectLeadersRequest, done func(*kmsg.ElectLeadersResponse)) {
	unclean := req.Version >= 1 && req.ElectionType == 1
	if req.Version >= 1 && req.ElectionType != 0 && req.ElectionType != 1 {
		resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
		resp.ErrorCode = kerr.InvalidRequest.Code
		done(resp)
		return
	}
	c.submitAdmin(func() ([]metadata.Record, func(*failure)) {
		elections, records := c.planElections(req, unclean)
		return records, func(outcome *failure) { done(electLeadersAnswer(req, elections, outcome)) }
	}, func(f *failure) {
		resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
		resp.ErrorCode = f.errorCode()
		for _, t := range req.Topics {
			rt := kmsg.NewElectLeadersResponseTopic()
			rt.Topic = t.Topic
			for _, index := range t.Partitions {
				rp := kmsg.NewElectLeadersResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.ErrorMessage = index, f.errorCode(), f.messagePointer()
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		done(resp)
	})
}

// election is one partition's outcome: failure nil when a change was
// planned for it.
type election struct {
	topic     string
	partition int32
	failure   *failure
}

// planElections judges every partition the request names (every partition
// of every topic when it names none) and returns their outcomes, in
// request order (topic name and partition order for all), and the changes.
func (c *Controller) planElections(req *kmsg.ElectLeadersRequest, unclean bool) ([]election, []metadata.Record) {
	var elections []election
	var records []metadata.Record
	view := candidates{c: c, leaving: -1, joining: -1}
	type key struct {
		topic     string
		partition int32
	}
	judged := map[key]bool{}
	judge := func(topic string, index int32, all bool) {
		if judged[key{topic, index}] {
			return
		}
		judged[key{topic, index}] = true
		record, f := c.planElection(topic, index, unclean, view)
		if all && f != nil && f.code == kerr.ElectionNotNeeded {
			return
		}
		if record != nil {
			records = append(records, *record)
		}
		elections = append(elections, election{topic: topic, partition: index, failure: f})
	}
	if req.Topics == nil {
		for _, name := range c.image.TopicNames() {
			for _, p := range c.image.Topics[name].Partitions {
				judge(name, p.Index, true)
			}
		}
	}
	for _, t := range req.Topics {
		for _, index := range t.Partitions {
			judge(t.Topic, index, false)
		}
	}
	if len(records) > recordsPerOperationMax {
		tooMany := fail(kerr.InvalidRequest, "the request needs %d elections, more than %d at once; name fewer partitions", len(records), recordsPerOperationMax)
		for i := range elections {
			if elections[i].failure == nil {
				elections[i].failure = tooMany
			}
		}
		records = nil
	}
	return elections, records
}

// planElection judges one partition (see ElectLeaders).
func (c *Controller) planElection(topic string, index int32, unclean bool, view candidates) (*metadata.Record, *failure) {
	t, ok := c.image.Topics[topic]
	if !ok || index < 0 || int(index) >= len(t.Partitions) {
		return nil, fail(kerr.UnknownTopicOrPartition, "no partition %d of topic %q", index, topic)
	}
	p := t.Partitions[index]
	leader, isr := int32(-1), p.ISR
	if unclean {
		if p.Leader >= 0 {
			return nil, fail(kerr.ElectionNotNeeded, "%s-%d is led by %d", topic, index, p.Leader)
		}
		if leader, isr = c.electAllowingUnclean(p, p.ISR, view, true); leader < 0 {
			return nil, fail(kerr.EligibleLeadersNotAvailable, "no replica of %s-%d may lead: every one is down, fenced or shutting down", topic, index)
		}
	} else {
		preferred := p.Replicas[0]
		if p.Leader == preferred {
			return nil, fail(kerr.ElectionNotNeeded, "%s-%d is led by its preferred replica %d", topic, index, preferred)
		}
		inISR := slices.Contains(p.ISR, preferred)
		if c.w.Canaries.On(CanaryPreferredOutsideISR) && !inISR && view.mayLead(preferred) {
			inISR, isr = true, []int32{preferred}
		}
		if !inISR || !view.mayLead(preferred) {
			return nil, fail(kerr.PreferredLeaderNotAvailable, "the preferred replica %d of %s-%d is not in the ISR %v or may not lead", preferred, topic, index, p.ISR)
		}
		leader = preferred
	}
	record, _ := c.partitionChange(p, leader, isr, view)
	return &record, nil
}

// electLeadersAnswer builds the answer: each partition's failure, or the
// proposal's outcome for those it changed.
func electLeadersAnswer(req *kmsg.ElectLeadersRequest, elections []election, outcome *failure) *kmsg.ElectLeadersResponse {
	resp := req.ResponseKind().(*kmsg.ElectLeadersResponse)
	byTopic := map[string]int{}
	for _, e := range elections {
		i, seen := byTopic[e.topic]
		if !seen {
			i = len(resp.Topics)
			byTopic[e.topic] = i
			rt := kmsg.NewElectLeadersResponseTopic()
			rt.Topic = e.topic
			resp.Topics = append(resp.Topics, rt)
		}
		f := e.failure
		if f == nil {
			f = outcome
		}
		rp := kmsg.NewElectLeadersResponseTopicPartition()
		rp.Partition, rp.ErrorCode, rp.ErrorMessage = e.partition, f.errorCode(), f.messagePointer()
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, rp)
	}
	return resp
}
