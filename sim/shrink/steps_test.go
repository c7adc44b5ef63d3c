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
	s.Topics[0].DeleteEvery = 0
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
