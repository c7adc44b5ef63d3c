package scenario

import (
	"fmt"
	"time"

	"sluice/sim/kernel"
)

// The fault schedule a seed draws (draw.go draws the rest of the
// scenario): each fault kind on with some chance at a mean interval
// (kindDraws), then GenerateSchedule turns the rates into timed events,
// each with a target, a window and its kind's settings.

// kindDraw is how the swarm draws one kind's rate: on with probability
// chance, then a mean interval in [low, high].
type kindDraw struct {
	kind      Kind
	chance    float64
	low, high time.Duration
}

var kindDraws = []kindDraw{
	{KindCrash, 0.6, 2 * time.Second, 6 * time.Second},
	{KindPowerLoss, 0.2, 4 * time.Second, 10 * time.Second},
	{KindPause, 0.35, 2 * time.Second, 6 * time.Second},
	{KindIsolate, 0.35, 2 * time.Second, 6 * time.Second},
	{KindCutFrom, 0.2, 3 * time.Second, 8 * time.Second},
	{KindCutTo, 0.2, 3 * time.Second, 8 * time.Second},
	{KindBridge, 0.2, 3 * time.Second, 8 * time.Second},
	{KindMinority, 0.25, 3 * time.Second, 8 * time.Second},
	{KindReset, 0.35, time.Second, 4 * time.Second},
	{KindClockJump, 0.25, 2 * time.Second, 6 * time.Second},
	{KindClockDrift, 0.2, 3 * time.Second, 8 * time.Second},
	{KindSlowDisk, 0.3, 2 * time.Second, 6 * time.Second},
	{KindFullDisk, 0.2, 3 * time.Second, 8 * time.Second},
	{KindFailFsync, 0.15, 4 * time.Second, 10 * time.Second},
	{KindClientCrash, 0.35, 2 * time.Second, 6 * time.Second},
	{KindClientPause, 0.3, 3 * time.Second, 8 * time.Second},
	// Added after the others (see kinds), and rare: a strand long enough
	// to matter outlasts the broker session, and the other network kinds
	// already exercise most of what it does.
	{KindStrand, 0.1, 4 * time.Second, 10 * time.Second},
	// Added last, after the strand, for the same reason. A partition
	// splits the nodes its own way (drawSides), so it reaches the shapes
	// the kinds aimed at one node cannot. A heal is rarer, and drawn only
	// when some network fault is on: it ends them all before their
	// windows do, as an operator's fix or a link coming back would.
	{KindPartition, 0.25, 3 * time.Second, 8 * time.Second},
	{KindHeal, 0.15, 4 * time.Second, 10 * time.Second},
}

// hasNetworkRate reports whether a network kind is on among rates.
func hasNetworkRate(rates []Rate) bool {
	for _, r := range rates {
		if r.Kind.IsNetwork() {
			return true
		}
	}
	return false
}

// GenerateSchedule draws the fault schedule of a scenario from its rates:
// each kind a Poisson process over the safety phase, targets and windows
// drawn from its own stream of the seed, so that the rest of the scenario
// can change without moving the faults. A scenario whose rates give fewer
// than three faults gets more, of the kinds it has on (or crashes), at
// uniform times; a scenario with no rates at all gets none.
func GenerateSchedule(s Scenario) []Event {
	if len(s.Rates) == 0 {
		return nil
	}
	rng := kernel.NewRand(s.Seed, "scenario/schedule")
	var events []Event
	for _, r := range s.Rates {
		at := time.Duration(0)
		for len(events) < eventsMax {
			at += kernel.Exponential(rng, r.Mean)
			if at >= s.Safety {
				break
			}
			events = append(events, drawEvent(rng, s, r.Kind, roundMilli(at)))
		}
	}
	// A heal is no fault of its own: the floor counts the others, and
	// is made up from them (a scenario whose only rate is a heal gets
	// crashes).
	faultKinds := make([]Kind, 0, len(s.Rates))
	for _, r := range s.Rates {
		if r.Kind != KindHeal {
			faultKinds = append(faultKinds, r.Kind)
		}
	}
	if len(faultKinds) == 0 {
		faultKinds = []Kind{KindCrash}
	}
	for faults(events) < drawFaultsMin {
		kind := faultKinds[rng.IntN(len(faultKinds))]
		events = append(events, drawEvent(rng, s, kind, roundMilli(kernel.Between(rng, 0, s.Safety-time.Millisecond))))
	}
	SortEvents(events)
	return events
}

// faults counts the events that are faults of their own: all but heals.
func faults(events []Event) int {
	n := 0
	for _, e := range events {
		if e.Kind != KindHeal {
			n++
		}
	}
	return n
}

// drawEvent draws one event of a kind at a time.
func drawEvent(rng random, s Scenario, kind Kind, at time.Duration) Event {
	e := Event{At: min(at, s.Safety-time.Millisecond), Kind: kind}
	info, _ := infoOf(kind)
	if info.window {
		e.For = roundMilli(kernel.Between(rng, s.Faults.WindowMin, s.Faults.WindowMax))
	}
	switch info.target {
	case targetNode:
		e.Target = drawTarget(rng, s, kind)
	case targetSides:
		e.Sides = drawSides(rng, s.Cluster.Nodes)
	case targetClient:
		names := s.ClientNames()
		e.Client = "any"
		if len(names) > 0 {
			e.Client = names[rng.IntN(len(names))]
		}
	}
	switch kind {
	case KindPowerLoss:
		if rng.IntN(2) == 0 {
			e.Stagger = roundMilli(kernel.Between(rng, 0, e.For))
		}
	case KindClockJump:
		e.By = roundMilli(kernel.Between(rng, drawClockJumpMin, drawClockJumpMax))
		if rng.IntN(2) == 0 {
			e.By = -e.By
		}
	case KindClockDrift:
		e.Rate = roundChance(DriftRateMin + rng.Float64()*(DriftRateMax-DriftRateMin))
	case KindSlowDisk:
		e.SyncMin = roundMilli(kernel.Between(rng, drawSlowSyncMinMin, drawSlowSyncMinMax))
		e.SyncMax = roundMilli(kernel.Between(rng, e.SyncMin, drawSlowSyncMaxMax))
	case KindSlowNet:
		e.LatencyMin = roundMilli(kernel.Between(rng, drawSlowNetLatencyMinMin, drawSlowNetLatencyMinMax))
		e.LatencyMax = roundMilli(kernel.Between(rng, e.LatencyMin, drawSlowNetLatencyMaxMax))
	}
	return e
}

// drawTarget picks the node a fault aims at: at the scenario's leader bias
// a partition's leader or the controller, chosen when the event fires;
// otherwise a node by id. A reset aims at one random connection half the
// time.
func drawTarget(rng random, s Scenario, kind Kind) Target {
	if kind == KindReset && rng.IntN(2) == 0 {
		return Target{Role: RoleAny}
	}
	if rng.Float64() < s.Faults.LeaderBias {
		if rng.IntN(4) == 0 {
			return Target{Role: RoleController}
		}
		topic := s.Topics[rng.IntN(len(s.Topics))]
		return LeaderTarget(topic.Name, int32(rng.IntN(topic.Partitions)))
	}
	return NodeTarget(1 + rng.IntN(s.Cluster.Nodes))
}

// drawSides splits the nodes in two sides, each listed ascending: one
// node drawn for each side, then every other node on either side, or half
// the time on neither (a node left out still reaches both sides, as the
// target of a bridge does). Any split can come out, {n1 n4 | n2 n3 n5} as
// well as the shapes of a minority, an isolation or a bridge.
func drawSides(rng random, nodes int) [2][]int {
	if nodes < 2 {
		panic(fmt.Sprintf("scenario: a partition of %d node(s) has no two sides", nodes))
	}
	left := 1 + rng.IntN(nodes)
	right := 1 + rng.IntN(nodes-1)
	if right >= left {
		right++
	}
	places := 2
	if rng.IntN(2) == 0 {
		places = 3 // left, right, or neither
	}
	var sides [2][]int
	for id := 1; id <= nodes; id++ {
		switch {
		case id == left:
			sides[0] = append(sides[0], id)
		case id == right:
			sides[1] = append(sides[1], id)
		default:
			if place := rng.IntN(places); place < 2 {
				sides[place] = append(sides[place], id)
			}
		}
	}
	return sides
}

// sortEvents orders events by time, then by kind, stably.
// SortEvents puts events in schedule order: by time, then by kind, the
// order GenerateSchedule gives a drawn schedule.
func SortEvents(events []Event) {
	for i := 1; i < len(events); i++ {
		for j := i; j > 0 && eventBefore(events[j], events[j-1]); j-- {
			events[j], events[j-1] = events[j-1], events[j]
		}
	}
}

func eventBefore(a, b Event) bool {
	if a.At != b.At {
		return a.At < b.At
	}
	return kindOrder(a.Kind) < kindOrder(b.Kind)
}

// subset draws a non-empty subset of n partitions, ascending.
func subset(rng random, n int) []int32 {
	for {
		var chosen []int32
		for p := range int32(n) {
			if rng.IntN(2) == 0 {
				chosen = append(chosen, p)
			}
		}
		if len(chosen) > 0 && len(chosen) < n {
			return chosen
		}
		if n == 1 {
			return nil
		}
	}
}
