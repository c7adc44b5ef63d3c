package simclient

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"sluice/jepsen/history"
)

// stickyGroup is a group as the cooperative-sticky assignor sees it over
// several rebalances: who owns what, and in which generation each got it.
type stickyGroup struct {
	members    []string
	partitions int32
	owned      map[string][]history.TopicPartition
	generation map[string]int32
}

// rebalance runs one generation's assignment and has every member take
// it as a cooperative member does: what it is assigned is what it owns
// next, in this generation.
func (g *stickyGroup) rebalance(generation int32) map[string][]history.TopicPartition {
	var subscribers []subscriber
	for _, m := range g.members {
		subscribers = append(subscribers, subscriber{memberID: m, topics: []string{testTopic}, owned: g.owned[m], generation: g.generation[m]})
	}
	slices.SortFunc(subscribers, compareSubscribers)
	assigned := assignPartitions(AssignorCooperativeSticky, subscribers, map[string]int32{testTopic: g.partitions})
	for _, m := range g.members {
		g.owned[m], g.generation[m] = assigned[m], generation
	}
	return assigned
}

func TestCooperativeStickyWithholdsWhatItMovesAndSettlesBalanced(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		members := rapid.IntRange(1, 5).Draw(rt, "members")
		partitions := int32(rapid.IntRange(1, 12).Draw(rt, "partitions"))
		g := &stickyGroup{partitions: partitions, owned: map[string][]history.TopicPartition{}, generation: map[string]int32{}}
		for i := range members {
			m := fmt.Sprintf("m%d", i)
			g.members = append(g.members, m)
			// What each member claims as it joins: any partitions,
			// the topic's or not, possibly claimed by others too,
			// from any earlier generation.
			for _, p := range rapid.SliceOfDistinct(rapid.Int32Range(0, partitions+2), rapid.ID[int32]).Draw(rt, "owned "+m) {
				g.owned[m] = append(g.owned[m], tp(p))
			}
			slices.SortFunc(g.owned[m], history.TopicPartition.Compare)
			g.generation[m] = int32(rapid.IntRange(-1, 3).Draw(rt, "generation "+m))
		}
		owners := validOwners(subscribersFor(g), testTopic, partitions)

		first := g.rebalance(10)
		holders := map[history.TopicPartition]string{}
		for _, m := range g.members {
			for _, tp := range first[m] {
				if other, held := holders[tp]; held {
					rt.Fatalf("%s assigned to %s and %s", tp, other, m)
				}
				holders[tp] = m
				if owner, owned := owners[tp.Partition]; owned && owner != m {
					rt.Fatalf("%s assigned to %s while %s owns it: it must be withheld until its owner gives it up", tp, m, owner)
				}
			}
		}

		// Every member takes its assignment and gives up the rest;
		// the next rebalance must settle the group: every partition
		// assigned to exactly one member, shares differing by at most
		// one, and nothing moving after that.
		second := g.rebalance(11)
		counts := map[string]int{}
		assigned := 0
		for _, m := range g.members {
			counts[m] = len(second[m])
			assigned += len(second[m])
		}
		if assigned != int(partitions) {
			rt.Fatalf("second generation assigned %d of %d partitions: %v", assigned, partitions, second)
		}
		least, most := int(partitions), 0
		for _, n := range counts {
			least, most = min(least, n), max(most, n)
		}
		if most-least > 1 {
			rt.Fatalf("second generation unbalanced: %v", second)
		}
		for _, m := range g.members {
			for _, tp := range first[m] {
				if !slices.Contains(second[m], tp) {
					rt.Fatalf("%s moved from %s in the second generation, though nothing called for it: %v then %v", tp, m, first, second)
				}
			}
		}
		third := g.rebalance(12)
		for _, m := range g.members {
			if !slices.Equal(second[m], third[m]) {
				rt.Fatalf("a settled group moved: %v then %v", second, third)
			}
		}
	})
}

func subscribersFor(g *stickyGroup) []subscriber {
	var subscribers []subscriber
	for _, m := range g.members {
		subscribers = append(subscribers, subscriber{memberID: m, topics: []string{testTopic}, owned: g.owned[m], generation: g.generation[m]})
	}
	return subscribers
}

func TestCooperativeStickyKeepsWhatFitsAndHonoursTheNewestClaim(t *testing.T) {
	subscribers := []subscriber{
		{memberID: "a", topics: []string{testTopic}, owned: []history.TopicPartition{tp(0), tp(1), tp(2), tp(3)}, generation: 4},
		{memberID: "b", topics: []string{testTopic}, owned: []history.TopicPartition{tp(3)}, generation: 3},
		{memberID: "c", topics: []string{testTopic}, generation: -1},
	}
	got := assignPartitions(AssignorCooperativeSticky, subscribers, map[string]int32{testTopic: 6})
	// a owns 0-3 (its claim to 3 is newer than b's) and keeps its share
	// of two, 0 and 1; 2 and 3 would go to b, but are withheld until a
	// gives them up; c gets 4 and 5.
	want := map[string][]history.TopicPartition{
		"a": {tp(0), tp(1)},
		"b": nil,
		"c": {tp(4), tp(5)},
	}
	for member, tps := range want {
		if !slices.Equal(got[member], tps) {
			t.Fatalf("assignment %v, want %v", got, want)
		}
	}
}
