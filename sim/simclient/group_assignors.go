package simclient

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/jepsen/history"
)

// The assignors a group leader runs. In Kafka's classic protocol the
// coordinator never looks inside an assignment: the member it elects
// leader gets every member's subscription (ConsumerMemberMetadata) with its
// JoinGroup answer, computes who reads what, and hands the result back in
// its SyncGroup as opaque bytes (ConsumerMemberAssignment), one per member.
// These are Kafka's RangeAssignor and RoundRobinAssignor, and a
// cooperative-sticky assignor (group_sticky.go), deterministic given the
// members, their subscriptions and partition counts.
const (
	// AssignorRange gives each member a contiguous range of each topic's
	// partitions; the first members get one more when they do not divide
	// evenly.
	AssignorRange = "range"
	// AssignorRoundRobin deals every subscribed partition, sorted by
	// topic and partition, to the members in turn.
	AssignorRoundRobin = "roundrobin"
	// AssignorCooperativeSticky keeps partitions where they are and
	// moves them in two rebalances (KIP-429, group_sticky.go). A consumer
	// that offers only it rebalances cooperatively (group_cooperative.go):
	// it reads what it keeps while the group rebalances. One that also
	// offers an eager assignor rebalances eagerly, as Kafka's consumer
	// does on the first step of an upgrade to it.
	AssignorCooperativeSticky = "cooperative-sticky"
)

// consumerProtocolType is the protocol type Kafka's consumers join with.
const consumerProtocolType = "consumer"

// knownAssignor reports whether this client can compute name's assignment.
func knownAssignor(name string) bool {
	return name == AssignorRange || name == AssignorRoundRobin || name == AssignorCooperativeSticky
}

// subscriber is one member of a generation as its leader sees it.
type subscriber struct {
	memberID   string
	instanceID *string
	topics     []string
	// owned are the partitions the member owns as it joins, and
	// generation the generation it got them in (-1 for none): what a
	// cooperative member's subscription says (v1 and v2 of Kafka's
	// ConsumerProtocolSubscription); an eager member owns nothing as it
	// joins.
	owned      []history.TopicPartition
	generation int32
}

// compareSubscribers orders members as Kafka's assignors do
// (AbstractPartitionAssignor.MemberInfo): by group.instance.id when both
// have one, by member id otherwise.
func compareSubscribers(a, b subscriber) int {
	if a.instanceID != nil && b.instanceID != nil {
		if c := cmp.Compare(*a.instanceID, *b.instanceID); c != 0 {
			return c
		}
	}
	return cmp.Compare(a.memberID, b.memberID)
}

// subscribersOf reads the members listed in the leader's JoinGroup answer.
// A subscription that does not parse counts as subscribing to nothing.
func subscribersOf(members []kmsg.JoinGroupResponseMember) ([]subscriber, error) {
	if len(members) > groupMembersMax {
		return nil, fmt.Errorf("%w: JoinGroup lists %d members, more than the %d a group may have", ErrProtocol, len(members), groupMembersMax)
	}
	subscribers := make([]subscriber, 0, len(members))
	for _, m := range members {
		var subscription kmsg.ConsumerMemberMetadata
		s := subscriber{memberID: m.MemberID, instanceID: m.InstanceID, generation: -1}
		if err := subscription.ReadFrom(m.ProtocolMetadata); err == nil {
			s.topics = subscription.Topics
			s.owned = ownedPartitions(subscription.OwnedPartitions)
			if subscription.Version >= 2 {
				s.generation = subscription.Generation
			}
		}
		subscribers = append(subscribers, s)
	}
	slices.SortFunc(subscribers, compareSubscribers)
	return subscribers, nil
}

// assignPartitions computes one generation's assignment: for each member,
// the partitions it reads, sorted. partitions gives each topic's partition
// count; topics it does not name are not assigned.
func assignPartitions(assignor string, subscribers []subscriber, partitions map[string]int32) map[string][]history.TopicPartition {
	if assignor == AssignorCooperativeSticky {
		return assignCooperativeSticky(subscribers, partitions)
	}
	assigned := map[string][]history.TopicPartition{}
	for _, s := range subscribers {
		assigned[s.memberID] = nil
	}
	topics := subscribedTopics(subscribers, partitions)
	switch assignor {
	case AssignorRange:
		for _, topic := range topics {
			var members []string
			for _, s := range subscribers {
				if slices.Contains(s.topics, topic) {
					members = append(members, s.memberID)
				}
			}
			count := int(partitions[topic])
			each, extra := count/len(members), count%len(members)
			next := 0
			for i, member := range members {
				take := each
				if i < extra {
					take++
				}
				for p := next; p < next+take; p++ {
					assigned[member] = append(assigned[member], history.TopicPartition{Topic: topic, Partition: int32(p)})
				}
				next += take
			}
		}
	case AssignorRoundRobin:
		turn := 0
		for _, topic := range topics {
			for p := range partitions[topic] {
				// The next member in turn that subscribes to the
				// topic; topics lists only subscribed topics, so one
				// does.
				for !slices.Contains(subscribers[turn%len(subscribers)].topics, topic) {
					turn++
				}
				member := subscribers[turn%len(subscribers)].memberID
				assigned[member] = append(assigned[member], history.TopicPartition{Topic: topic, Partition: p})
				turn++
			}
		}
	default:
		panic(fmt.Sprintf("simclient: no assignor %q", assignor))
	}
	for member := range assigned { // order-independent: sorts each list in place
		slices.SortFunc(assigned[member], history.TopicPartition.Compare)
	}
	return assigned
}

// subscribedTopics lists, sorted, the topics some member subscribes to
// whose partition count is known.
func subscribedTopics(subscribers []subscriber, partitions map[string]int32) []string {
	var topics []string
	for _, s := range subscribers {
		for _, topic := range s.topics {
			if partitions[topic] > 0 && !slices.Contains(topics, topic) {
				topics = append(topics, topic)
			}
		}
	}
	slices.Sort(topics)
	return topics
}

// encodeAssignment is one member's part of the leader's SyncGroup.
func encodeAssignment(tps []history.TopicPartition) []byte {
	assignment := kmsg.NewConsumerMemberAssignment()
	for _, tp := range tps {
		if n := len(assignment.Topics); n == 0 || assignment.Topics[n-1].Topic != tp.Topic {
			topic := kmsg.NewConsumerMemberAssignmentTopic()
			topic.Topic = tp.Topic
			assignment.Topics = append(assignment.Topics, topic)
		}
		topic := &assignment.Topics[len(assignment.Topics)-1]
		topic.Partitions = append(topic.Partitions, tp.Partition)
	}
	return assignment.AppendTo(nil)
}

// decodeAssignment reads a SyncGroup answer's assignment: the partitions
// of topic this member reads, sorted. Empty bytes assign nothing (the
// leader left the member out).
func decodeAssignment(data []byte, topic string) ([]history.TopicPartition, error) {
	if len(data) == 0 {
		return nil, nil
	}
	var assignment kmsg.ConsumerMemberAssignment
	if err := assignment.ReadFrom(data); err != nil {
		return nil, fmt.Errorf("%w: assignment does not decode: %v", ErrProtocol, err)
	}
	var tps []history.TopicPartition
	for _, t := range assignment.Topics {
		if t.Topic != topic {
			continue
		}
		for _, p := range t.Partitions {
			if p < 0 {
				return nil, fmt.Errorf("%w: assignment names partition %d", ErrProtocol, p)
			}
			tps = append(tps, history.TopicPartition{Topic: topic, Partition: p})
		}
	}
	if len(tps) > assignedPartitionsMax {
		return nil, fmt.Errorf("%w: assignment names %d partitions, more than %d", ErrProtocol, len(tps), assignedPartitionsMax)
	}
	slices.SortFunc(tps, history.TopicPartition.Compare)
	return slices.Compact(tps), nil
}

// subscription is an eager member's JoinGroup metadata for every assignor
// it offers: the one topic it subscribes to.
func subscription(topic string) []byte {
	metadata := kmsg.NewConsumerMemberMetadata()
	metadata.Topics = []string{topic}
	return metadata.AppendTo(nil)
}

// cooperativeSubscription is a cooperative member's JoinGroup metadata
// (version 2): the topic, the partitions it owns and the generation it
// got them in, which the leader's cooperative-sticky assignor keeps where
// they are.
func cooperativeSubscription(topic string, owned []history.TopicPartition, generation int32) []byte {
	metadata := kmsg.NewConsumerMemberMetadata()
	metadata.Version = 2
	metadata.Topics = []string{topic}
	metadata.Generation = generation
	for _, tp := range owned {
		if n := len(metadata.OwnedPartitions); n == 0 || metadata.OwnedPartitions[n-1].Topic != tp.Topic {
			topic := kmsg.NewConsumerMemberMetadataOwnedPartition()
			topic.Topic = tp.Topic
			metadata.OwnedPartitions = append(metadata.OwnedPartitions, topic)
		}
		topic := &metadata.OwnedPartitions[len(metadata.OwnedPartitions)-1]
		topic.Partitions = append(topic.Partitions, tp.Partition)
	}
	return metadata.AppendTo(nil)
}

// ownedPartitions reads a subscription's owned partitions, at most
// assignedPartitionsMax of them: a member never owns more, so a
// subscription that claims more claims nothing.
func ownedPartitions(topics []kmsg.ConsumerMemberMetadataOwnedPartition) []history.TopicPartition {
	var owned []history.TopicPartition
	for _, t := range topics {
		for _, p := range t.Partitions {
			if len(owned) == assignedPartitionsMax {
				return nil
			}
			owned = append(owned, history.TopicPartition{Topic: t.Topic, Partition: p})
		}
	}
	return owned
}
