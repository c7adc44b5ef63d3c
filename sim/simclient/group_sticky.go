package simclient

import (
	"cmp"
	"slices"

	"sluice/jepsen/history"
)

// The cooperative-sticky assignor (KIP-429, Kafka's
// CooperativeStickyAssignor), as a group leader runs it. Each member's
// subscription says which partitions it owns and in which generation it
// got them; the leader keeps every partition where it is, as far as a
// balanced count allows, hands out the partitions nobody owns, and then
// withholds every partition it moved: a partition another member owns is
// assigned to nobody in this generation. Its owner, finding it missing
// from its assignment, stops reading it, commits it and rejoins, and the
// next generation gives it to its new member. So at no moment do two
// members read one partition, though neither stops reading what it keeps
// while the group rebalances.
//
// A member that claims a partition with an older generation than another
// claimant lost it without noticing (it was expired, and came back):
// the newest claim holds. Two claims of one partition in the same
// generation cannot both be right, so neither holds (Kafka's
// AbstractStickyAssignor does the same).
//
// This is a smaller algorithm than Kafka's, which balances across topics
// at once; it balances each topic among its subscribers, which is the
// same thing for a group on one topic, as the simulator's are.

// claim is one member's claim to own a partition.
type claim struct {
	member     string
	generation int32
}

// assignCooperativeSticky computes one generation's cooperative-sticky
// assignment; the arguments and result are assignPartitions's.
func assignCooperativeSticky(subscribers []subscriber, partitions map[string]int32) map[string][]history.TopicPartition {
	assigned := map[string][]history.TopicPartition{}
	for _, s := range subscribers {
		assigned[s.memberID] = nil
	}
	for _, topic := range subscribedTopics(subscribers, partitions) {
		var members []subscriber
		for _, s := range subscribers {
			if slices.Contains(s.topics, topic) {
				members = append(members, s)
			}
		}
		owners := validOwners(members, topic, partitions[topic])
		for member, tps := range stickyTopicAssignment(members, topic, partitions[topic], owners) { // order-independent: fills a map
			assigned[member] = append(assigned[member], tps...)
		}
	}
	for member := range assigned { // order-independent: sorts each list in place
		slices.SortFunc(assigned[member], history.TopicPartition.Compare)
	}
	return assigned
}

// validOwners is, for each partition of topic that has one, the member
// whose claim to own it holds (see the file's comment); claims of
// partitions the topic does not have are ignored.
func validOwners(members []subscriber, topic string, count int32) map[int32]string {
	newest := map[int32]claim{}
	contested := map[int32]bool{}
	for _, s := range members {
		for _, tp := range s.owned {
			if tp.Topic != topic || tp.Partition < 0 || tp.Partition >= count {
				continue
			}
			current, claimed := newest[tp.Partition]
			switch {
			case !claimed || s.generation > current.generation:
				newest[tp.Partition] = claim{member: s.memberID, generation: s.generation}
				delete(contested, tp.Partition)
			case s.generation == current.generation && s.memberID != current.member:
				contested[tp.Partition] = true
			}
		}
	}
	owners := map[int32]string{}
	for p, c := range newest { // order-independent: builds a map
		if !contested[p] {
			owners[p] = c.member
		}
	}
	return owners
}

// stickyTopicAssignment assigns one topic's partitions among members
// (sorted as compareSubscribers sorts them), keeping each owner's
// partitions up to its share and withholding those it moves.
func stickyTopicAssignment(members []subscriber, topic string, count int32, owners map[int32]string) map[string][]history.TopicPartition {
	kept := map[string][]int32{}
	for p := range count {
		if owner, owned := owners[p]; owned {
			kept[owner] = append(kept[owner], p)
		}
	}
	// Shares: count/len(members) each, one more for the first
	// count%len(members) members in order of how much they own now
	// (then the members' order), so the extra ones stay where they are.
	byOwned := slices.Clone(members)
	slices.SortStableFunc(byOwned, func(a, b subscriber) int { return cmp.Compare(len(kept[b.memberID]), len(kept[a.memberID])) })
	share := map[string]int{}
	for i, s := range byOwned {
		share[s.memberID] = int(count) / len(members)
		if i < int(count)%len(members) {
			share[s.memberID]++
		}
	}
	target := map[string][]int32{}
	taken := map[int32]bool{}
	for _, s := range members {
		keep := kept[s.memberID][:min(len(kept[s.memberID]), share[s.memberID])]
		target[s.memberID] = slices.Clone(keep)
		for _, p := range keep {
			taken[p] = true
		}
	}
	next := 0
	for p := range count {
		if taken[p] {
			continue
		}
		for len(target[members[next].memberID]) >= share[members[next].memberID] {
			next++
		}
		target[members[next].memberID] = append(target[members[next].memberID], p)
	}
	result := map[string][]history.TopicPartition{}
	for _, s := range members {
		for _, p := range target[s.memberID] {
			if owner, owned := owners[p]; owned && owner != s.memberID {
				continue // its owner gives it up first
			}
			result[s.memberID] = append(result[s.memberID], history.TopicPartition{Topic: topic, Partition: p})
		}
	}
	return result
}
