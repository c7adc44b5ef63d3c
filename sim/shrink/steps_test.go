package shrink

import (
	"testing"
	"time"

	"sluice/sim/scenario"
)

// A growing topic is one more thing a case may not need: noTopicActions offers
// the scenario without it, and a shorter safety phase that the growth no
// longer fits in drops it rather than leave an invalid scenario.
func TestShrinkingDropsATopicsGrowth(t *testing.T) {
	s := scenario.Draw(1)
	s.Safety = 10 * time.Second
	s.Topics[0].GrowTo, s.Topics[0].GrowAt = s.Topics[0].Partitions+1, 6*time.Second
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	s.Topics[0].DeleteEvery, s.Topics[0].AlterEvery, s.Topics[0].ElectEvery, s.Topics[0].ReassignEvery = 0, 0, 0, 0
	candidates := noTopicActions(s)
	if len(candidates) != 1 || candidates[0].scenario.Topics[0].GrowTo != 0 || Size(candidates[0].scenario) >= Size(s) {
		t.Fatalf("noTopicActions gave %+v, want one smaller candidate without the growth", candidates)
	}
	if s.Topics[0].GrowTo == 0 {
		t.Fatal("noTopicActions changed the scenario it was given")
	}
	for _, c := range shorterSafety(s) {
		if err := c.scenario.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if grows := c.scenario.Topics[0].GrowTo != 0; grows != (c.scenario.Safety > 6*time.Second) {
			t.Fatalf("%s: growth kept=%v", c.name, grows)
		}
	}
}

// An operator altering a topic's configs is an action a case may not need
// either: noTopicActions offers the scenario without it, and a shorter
// safety phase keeps the interval within the phase.
func TestShrinkingDropsATopicsConfigChanges(t *testing.T) {
	s := scenario.Draw(1)
	s.Safety = 10 * time.Second
	s.Topics[0].GrowTo, s.Topics[0].GrowAt, s.Topics[0].DeleteEvery, s.Topics[0].ElectEvery, s.Topics[0].ReassignEvery = 0, 0, 0, 0, 0
	s.Topics[0].AlterEvery = 8 * time.Second
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	candidates := noTopicActions(s)
	if len(candidates) != 1 || candidates[0].scenario.Topics[0].AlterEvery != 0 || Size(candidates[0].scenario) >= Size(s) {
		t.Fatalf("noTopicActions gave %d candidates, want one smaller candidate without the config changes", len(candidates))
	}
	if candidates[0].name != "topic orders keeps its configs" {
		t.Fatalf("candidate named %q", candidates[0].name)
	}
	for _, c := range shorterSafety(s) {
		if err := c.scenario.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if every := c.scenario.Topics[0].AlterEvery; every > c.scenario.Safety || every == 0 {
			t.Fatalf("%s: alters every %v with safety %v", c.name, every, c.scenario.Safety)
		}
	}
}

// An event aimed at the group's coordinator has no target once the case
// has no group: dropping the group drops the event too, so the smaller
// case stays valid.
func TestDroppingTheGroupDropsTheEventsAimedAtItsCoordinator(t *testing.T) {
	s := scenario.Draw(3)
	s.Rates = nil
	s.Schedule = []scenario.Event{
		{At: time.Second, Kind: scenario.KindStrand, Target: scenario.Target{Role: scenario.RoleCoordinator}, For: 2 * time.Second},
		{At: 2 * time.Second, Kind: scenario.KindCrash, Target: scenario.NodeTarget(1), For: time.Second},
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	dropped := false
	for _, c := range dropClients(s) {
		if len(c.scenario.Clients.Groups) > 0 {
			continue
		}
		dropped = true
		if len(c.scenario.Schedule) != 1 || c.scenario.Schedule[0].Kind != scenario.KindCrash {
			t.Fatalf("%s: schedule %+v, want the crash alone", c.name, c.scenario.Schedule)
		}
		if err := c.scenario.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	if !dropped {
		t.Fatal("no candidate drops the group")
	}
}

// A producer's batching, compression, lingering and sends in flight are
// settings a case may not need: plainerSends offers the scenario without each, one at a
// time, each smaller.
func TestShrinkingOffersPlainerSends(t *testing.T) {
	s := scenario.Draw(1)
	for i := range s.Clients.Producers {
		s.Clients.Producers[i].BatchMax, s.Clients.Producers[i].Compression, s.Clients.Producers[i].Linger = 0, 0, 0
	}
	for i := range s.Clients.Producers {
		s.Clients.Producers[i].InFlight = 0
	}
	p := &s.Clients.Producers[0]
	p.Idempotent, p.BatchMax, p.Compression, p.Linger, p.InFlight = true, 5, 3, 20*time.Millisecond, 4
	candidates := plainerSends(s)
	if len(candidates) != 4 {
		t.Fatalf("plainerSends gave %d candidates, want 4 (batching, compression, linger, in flight)", len(candidates))
	}
	for _, c := range candidates {
		q := c.scenario.Clients.Producers[0]
		unset := 0
		for _, off := range []bool{q.BatchMax == 0, q.Compression == 0, q.Linger == 0, q.InFlight == 0} {
			if off {
				unset++
			}
		}
		if unset != 1 || Size(c.scenario) >= Size(s) {
			t.Fatalf("%s: %+v (size %d of %d); want one setting off and a smaller size", c.name, q, Size(c.scenario), Size(s))
		}
	}
	if p.BatchMax != 5 || p.Compression != 3 || p.Linger == 0 || p.InFlight != 4 {
		t.Fatal("plainerSends changed the scenario it was given")
	}
}
