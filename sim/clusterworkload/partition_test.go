package clusterworkload

import (
	"strings"
	"testing"
	"time"

	"sluice/sim"
	"sluice/sim/scenario"
)

// drawSearchSeedsMax bounds the seeds searched for one that draws a
// partition of the shape wanted.
const drawSearchSeedsMax = 3000

// TestDrawnPartitionReplaysFromItsFile runs a seed whose swarm drew a
// partition leaving a node on neither side: the nemesis cuts exactly the
// links between the sides it drew, the result line names them, and the
// scenario written out replays to the same trace.
func TestDrawnPartitionReplaysFromItsFile(t *testing.T) {
	seed, event := uint64(0), scenario.Event{}
	for candidate := uint64(1); candidate <= drawSearchSeedsMax && seed == 0; candidate++ {
		s := scenario.Draw(candidate)
		for _, e := range s.Schedule {
			if e.Kind == scenario.KindPartition && len(e.Sides[0])+len(e.Sides[1]) < s.Cluster.Nodes {
				seed, event = candidate, e
				break
			}
		}
	}
	if seed == 0 {
		t.Fatalf("no seed up to %d draws a partition leaving a node out", drawSearchSeedsMax)
	}
	r := New().Run(seed, sim.RunOptions{Record: true})
	if !r.Passed() {
		t.Fatalf("seed %d failed: %s", seed, r.Line())
	}
	written := strings.ReplaceAll(scenario.FormatEvent(event), " ", "_")
	if !strings.Contains(r.Line(), written) {
		t.Fatalf("seed %d: the result line does not name the partition %q:\n%s", seed, written, r.Line())
	}
	if n := stat(t, r, "fault_partition"); n < 1 {
		t.Fatalf("seed %d: fault_partition=%d", seed, n)
	}
	if r.Coverage == nil || r.Coverage.Faults[string(scenario.KindPartition)] < 1 {
		t.Fatalf("seed %d: coverage %+v counts no partition", seed, r.Coverage)
	}
	label := "partition-" + joinNodes(event.Sides[0]) + "|" + joinNodes(event.Sides[1])
	started := false
	for _, e := range r.Recording.Events {
		if e.Kind == sim.EventFaultStart && e.Label == label {
			started = true
		}
	}
	if !started {
		t.Fatalf("seed %d: no fault %s recorded", seed, label)
	}
	back, err := scenario.Parse(scenario.Format(ScenarioOf(seed, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if again := RunScenario(back, sim.RunOptions{}); again.TraceHash != r.TraceHash {
		t.Fatalf("seed %d: its file replays to trace %s, the seed ran %s", seed, again.TraceHash, r.TraceHash)
	}
}

// TestHealEndsEveryNetworkFaultEarly runs a partition and a one-way cut
// with long windows, then a heal: both end at the heal, the crash beside
// them does not, and the heal is counted once, as it ended something; a
// heal with nothing to end is not counted.
func TestHealEndsEveryNetworkFaultEarly(t *testing.T) {
	s := scenario.Draw(3)
	s.Rates = nil
	s.Schedule = []scenario.Event{
		{At: time.Second, Kind: scenario.KindPartition, Sides: [2][]int{{1}, {2, 3}}, For: 6 * time.Second},
		{At: time.Second, Kind: scenario.KindCutTo, Target: scenario.NodeTarget(2), For: 6 * time.Second},
		{At: 1500 * time.Millisecond, Kind: scenario.KindCrash, Target: scenario.NodeTarget(3), For: 2 * time.Second},
		{At: 2 * time.Second, Kind: scenario.KindHeal},
		{At: 3 * time.Second, Kind: scenario.KindHeal},
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	r := RunScenario(s, sim.RunOptions{Record: true})
	if !r.Passed() {
		t.Fatalf("run failed: %s", r.Line())
	}
	starts := map[string]time.Duration{}
	ends := map[string]time.Duration{}
	for _, e := range r.Recording.Events {
		switch e.Kind {
		case sim.EventFaultStart:
			starts[e.Label] = e.At
		case sim.EventFaultEnd:
			ends[e.Label] = e.At
		}
	}
	for _, label := range []string{"partition-n1|n2+n3", "cut-to-n2"} {
		if got := ends[label] - starts[label]; got != time.Second {
			t.Errorf("%s lasted %v, want 1s: the heal ends it", label, got)
		}
	}
	if got := ends["crash-n3"] - starts["crash-n3"]; got != 2*time.Second {
		t.Errorf("the crash lasted %v, want its 2s window: a heal ends network faults only", got)
	}
	if n := stat(t, r, "fault_heal"); n != 1 {
		t.Errorf("fault_heal=%d, want 1: the second heal had nothing to end", n)
	}
}

func joinNodes(ids []int) string {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = scenario.NodeName(id)
	}
	return strings.Join(names, "+")
}
