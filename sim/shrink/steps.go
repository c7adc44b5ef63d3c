package shrink

import (
	"fmt"
	"slices"
	"time"

	"sluice/sim/scenario"
)

// candidate is one proposed smaller scenario and the step that made it.
type candidate struct {
	name     string
	scenario scenario.Scenario
}

// step proposes smaller scenarios, most promising first.
type step struct {
	candidates func(s scenario.Scenario) []candidate
}

// steps are tried in order: the cheap, big reductions first.
var steps = []step{
	{dropRates},
	{shorterSafety},
	{noOperationsFloor},
	{noMetadataSnapshots},
	{noLeaderRebalancing},
	{defaultLogs},
	{noTopicActions},
	{plainerSends},
	{dropEvents},
	{dropClients},
	{fewerNodes},
	{dropTopics},
	{fewerPartitions},
	{dropIdleSlots},
}

// clone copies a scenario deeply enough that a step may change its lists.
func clone(s scenario.Scenario) scenario.Scenario {
	s.Topics = slices.Clone(s.Topics)
	s.Clients.Producers = slices.Clone(s.Clients.Producers)
	s.Clients.Readers = slices.Clone(s.Clients.Readers)
	s.Clients.Groups = slices.Clone(s.Clients.Groups)
	s.ClockRates = slices.Clone(s.ClockRates)
	s.Rates = slices.Clone(s.Rates)
	s.Schedule = slices.Clone(s.Schedule)
	s.Canaries = slices.Clone(s.Canaries)
	return s
}

// dropRates forgets the swarm's rates: the schedule is explicit, so they
// change nothing a run does, and the file reads shorter.
func dropRates(s scenario.Scenario) []candidate {
	if len(s.Rates) == 0 {
		return nil
	}
	c := clone(s)
	c.Rates = nil
	return []candidate{{"drop the rates", c}}
}

// shorterSafety halves the safety phase, or takes a second off it,
// leaving idle slots where the events that no longer fit were; a topic
// that grew too late for it grows no more, and deletions come at most
// once per safety phase.
func shorterSafety(s scenario.Scenario) []candidate {
	var out []candidate
	for _, safety := range []time.Duration{s.Safety / 2, s.Safety - time.Second} {
		safety = safety.Round(time.Millisecond)
		if safety < time.Second || safety >= s.Safety {
			continue
		}
		c := clone(s)
		c.Safety = safety
		for i := range c.Schedule {
			if c.Schedule[i].At >= safety {
				c.Schedule[i] = idle(c.Schedule[i])
			}
		}
		for i := range c.Topics {
			if c.Topics[i].GrowTo != 0 && c.Topics[i].GrowAt >= safety {
				c.Topics[i].GrowTo, c.Topics[i].GrowAt = 0, 0
			}
			c.Topics[i].DeleteEvery = min(c.Topics[i].DeleteEvery, safety)
			c.Topics[i].RecreateEvery = min(c.Topics[i].RecreateEvery, safety)
			c.Topics[i].AlterEvery = min(c.Topics[i].AlterEvery, safety)
			c.Topics[i].ElectEvery = min(c.Topics[i].ElectEvery, safety)
			c.Topics[i].ReassignEvery = min(c.Topics[i].ReassignEvery, safety)
		}
		out = append(out, candidate{fmt.Sprintf("safety %v", safety), c})
	}
	return out
}

// noOperationsFloor lets the safety phase end at Safety whatever the
// clients managed, so the case replays without waiting on them.
func noOperationsFloor(s scenario.Scenario) []candidate {
	if s.Operations == 0 {
		return nil
	}
	c := clone(s)
	c.Operations = 0
	return []candidate{{"no operations floor", c}}
}

// noLeaderRebalancing switches automatic leader rebalancing off.
func noLeaderRebalancing(s scenario.Scenario) []candidate {
	if s.Cluster.LeaderRebalanceEvery == 0 {
		return nil
	}
	c := clone(s)
	c.Cluster.LeaderRebalanceEvery = 0
	return []candidate{{"no leader rebalancing", c}}
}

// noMetadataSnapshots leaves metadata snapshots at the broker's default,
// which a run never reaches, so a case that still fails does not involve
// them.
func noMetadataSnapshots(s scenario.Scenario) []candidate {
	if s.Cluster.MetadataSnapshotEvery == 0 {
		return nil
	}
	c := clone(s)
	c.Cluster.MetadataSnapshotEvery = 0
	return []candidate{{"no metadata snapshots", c}}
}

// defaultLogs puts each of the logs' settings back to the broker's
// default, one at a time.
func defaultLogs(s scenario.Scenario) []candidate {
	var out []candidate
	for _, setting := range []struct {
		name  string
		unset func(*scenario.Logs) bool
	}{
		{"segment-bytes", func(l *scenario.Logs) bool { was := l.SegmentBytes != 0; l.SegmentBytes = 0; return was }},
		{"offsets-segment-bytes", func(l *scenario.Logs) bool { was := l.OffsetsSegmentBytes != 0; l.OffsetsSegmentBytes = 0; return was }},
		{"retention-check", func(l *scenario.Logs) bool { was := l.RetentionCheck != 0; l.RetentionCheck = 0; return was }},
	} {
		c := clone(s)
		if setting.unset(&c.Logs) {
			out = append(out, candidate{"default " + setting.name, c})
		}
	}
	return out
}

// noTopicActions drops what an operator does to a topic during the run,
// one action of one topic at a time: growing it, deleting its consumed
// records, deleting it and creating it again, altering its configs,
// electing its leaders.
func noTopicActions(s scenario.Scenario) []candidate {
	var out []candidate
	for i, t := range s.Topics {
		for _, action := range []struct {
			name  string
			unset func(*scenario.Topic) bool
		}{
			{"does not grow", func(t *scenario.Topic) bool { was := t.GrowTo != 0; t.GrowTo, t.GrowAt = 0, 0; return was }},
			{"has nothing deleted", func(t *scenario.Topic) bool { was := t.DeleteEvery != 0; t.DeleteEvery = 0; return was }},
			{"is not created again", func(t *scenario.Topic) bool { was := t.RecreateEvery != 0; t.RecreateEvery = 0; return was }},
			{"keeps its configs", func(t *scenario.Topic) bool { was := t.AlterEvery != 0; t.AlterEvery = 0; return was }},
			{"has no leaders elected", func(t *scenario.Topic) bool { was := t.ElectEvery != 0; t.ElectEvery = 0; return was }},
			{"is not reassigned", func(t *scenario.Topic) bool { was := t.ReassignEvery != 0; t.ReassignEvery = 0; return was }},
		} {
			c := clone(s)
			if action.unset(&c.Topics[i]) {
				out = append(out, candidate{fmt.Sprintf("topic %s %s", t.Name, action.name), c})
			}
		}
	}
	return out
}

// plainerSends offers each producer sending a record per batch,
// uncompressed, without lingering, one send in flight, one setting at a
// time: a case that
// still fails so shows its bug does not need them.
func plainerSends(s scenario.Scenario) []candidate {
	var out []candidate
	for i, p := range s.Clients.Producers {
		for _, setting := range []struct {
			name  string
			unset func(*scenario.Producer) bool
		}{
			{"sends a record per batch", func(p *scenario.Producer) bool { was := p.BatchMax > 1; p.BatchMax = 0; return was }},
			{"does not compress", func(p *scenario.Producer) bool { was := p.Compression != 0; p.Compression = 0; return was }},
			{"does not linger", func(p *scenario.Producer) bool { was := p.Linger != 0; p.Linger = 0; return was }},
			{"keeps one send in flight", func(p *scenario.Producer) bool { was := p.InFlight > 1; p.InFlight = 0; return was }},
		} {
			c := clone(s)
			if setting.unset(&c.Clients.Producers[i]) {
				out = append(out, candidate{fmt.Sprintf("producer %s %s", p.Name, setting.name), c})
			}
		}
	}
	return out
}

// dropEvents drops runs of fault events: halves first, then quarters,
// down to single events, latest first. Each leaves an idle slot (see
// scenario.KindIdle), so the run is the same up to the first fault
// dropped: a failure that strikes before it still does, and one that
// needs a later fault shows that it does.
func dropEvents(s scenario.Scenario) []candidate {
	var faults []int // indices of the schedule's faults, idle slots left out
	for i, e := range s.Schedule {
		if !isIdle(e) {
			faults = append(faults, i)
		}
	}
	var out []candidate
	n := len(faults)
	for chunk := n / 2; chunk >= 1; chunk /= 2 {
		for end := n; end-chunk >= 0; end -= chunk {
			c := clone(s)
			for _, i := range faults[end-chunk : end] {
				c.Schedule[i] = idle(c.Schedule[i])
			}
			first, last := s.Schedule[faults[end-chunk]], s.Schedule[faults[end-1]]
			name := fmt.Sprintf("drop %d events at %v..%v", chunk, first.At, last.At)
			if chunk == 1 {
				name = fmt.Sprintf("drop event at %v %s", last.At, scenario.FormatEvent(last))
			}
			out = append(out, candidate{name, c})
		}
	}
	return out
}

// idle is the idle slot that takes e's place.
func idle(e scenario.Event) scenario.Event {
	return scenario.Event{At: e.At, Kind: scenario.KindIdle}
}

// dropIdleSlots removes every idle slot at once, last: the file reads
// shorter when the failure does not depend on the draws they keep.
func dropIdleSlots(s scenario.Scenario) []candidate {
	if !slices.ContainsFunc(s.Schedule, isIdle) {
		return nil
	}
	c := clone(s)
	c.Schedule = slices.DeleteFunc(c.Schedule, isIdle)
	return []candidate{{"drop the idle slots", c}}
}

func isIdle(e scenario.Event) bool { return e.Kind == scenario.KindIdle }

// FaultEvents counts the schedule's faults, idle slots left out.
func FaultEvents(s scenario.Scenario) int {
	n := 0
	for _, e := range s.Schedule {
		if !isIdle(e) {
			n++
		}
	}
	return n
}

// dropClients removes a producer, a reader, a group, or one group member,
// with the fault events aimed at a client that is gone (or at the
// coordinator of a group that is).
func dropClients(s scenario.Scenario) []candidate {
	var out []candidate
	for i, p := range s.Clients.Producers {
		c := clone(s)
		c.Clients.Producers = slices.Delete(c.Clients.Producers, i, i+1)
		out = append(out, candidate{"drop producer " + p.Name, withoutLostClients(c)})
	}
	for i, r := range s.Clients.Readers {
		c := clone(s)
		c.Clients.Readers = slices.Delete(c.Clients.Readers, i, i+1)
		out = append(out, candidate{"drop reader " + r.Name, withoutLostClients(c)})
	}
	for i, g := range s.Clients.Groups {
		c := clone(s)
		c.Clients.Groups = slices.Delete(c.Clients.Groups, i, i+1)
		out = append(out, candidate{"drop group " + g.Name, withoutLostClients(c)})
		if g.Members > 1 {
			c := clone(s)
			c.Clients.Groups[i].Members--
			out = append(out, candidate{fmt.Sprintf("group %s with %d members", g.Name, g.Members-1), withoutLostClients(c)})
		}
	}
	return out
}

// withoutLostClients drops the client faults aimed at a client the
// scenario no longer has.
func withoutLostClients(s scenario.Scenario) scenario.Scenario {
	names := s.ClientNames()
	s.Schedule = slices.DeleteFunc(s.Schedule, func(e scenario.Event) bool {
		return e.Client != "" && e.Client != "any" && !slices.Contains(names, e.Client) ||
			e.Target.Role == scenario.RoleCoordinator && len(s.Clients.Groups) == 0
	})
	return s
}

// fewerNodes removes the last node, keeping every topic's replication
// factor (and min.insync.replicas) within the nodes left, and drops the
// events aimed at the node removed.
func fewerNodes(s scenario.Scenario) []candidate {
	nodes := s.Cluster.Nodes - 1
	if nodes < 1 {
		return nil
	}
	c := clone(s)
	c.Cluster.Nodes = nodes
	c.ClockRates = c.ClockRates[:min(len(c.ClockRates), nodes)]
	for i := range c.Topics {
		t := &c.Topics[i]
		t.Replication = min(t.Replication, nodes)
		t.MinInsync = min(t.MinInsync, t.Replication)
	}
	var schedule []scenario.Event
	for _, e := range c.Schedule {
		if e.Target.Role == scenario.RoleNode && e.Target.Node > nodes {
			continue
		}
		if e.Kind == scenario.KindPartition {
			left := slices.DeleteFunc(slices.Clone(e.Sides[0]), func(id int) bool { return id > nodes })
			right := slices.DeleteFunc(slices.Clone(e.Sides[1]), func(id int) bool { return id > nodes })
			if len(left) == 0 || len(right) == 0 {
				continue
			}
			e.Sides = [2][]int{left, right}
		}
		schedule = append(schedule, e)
	}
	c.Schedule = schedule
	return []candidate{{fmt.Sprintf("%d nodes", nodes), c}}
}

// dropTopics removes a topic other than the first, with its clients and
// the events aimed at its partitions' leaders.
func dropTopics(s scenario.Scenario) []candidate {
	var out []candidate
	for i := 1; i < len(s.Topics); i++ {
		name := s.Topics[i].Name
		c := clone(s)
		c.Topics = slices.Delete(c.Topics, i, i+1)
		c.Clients.Producers = slices.DeleteFunc(c.Clients.Producers, func(p scenario.Producer) bool { return p.Topic == name })
		c.Clients.Readers = slices.DeleteFunc(c.Clients.Readers, func(r scenario.Reader) bool { return r.Topic == name })
		c.Clients.Groups = slices.DeleteFunc(c.Clients.Groups, func(g scenario.Group) bool { return g.Topic == name })
		c.Schedule = slices.DeleteFunc(c.Schedule, func(e scenario.Event) bool { return e.Target.Role == scenario.RoleLeader && e.Target.Topic == name })
		out = append(out, candidate{"drop topic " + name, withoutLostClients(c)})
	}
	return out
}

// fewerPartitions removes a topic's last partition, from the clients that
// list it and the events aimed at its leader.
func fewerPartitions(s scenario.Scenario) []candidate {
	var out []candidate
	for i, t := range s.Topics {
		if t.Partitions <= 1 {
			continue
		}
		last := int32(t.Partitions - 1)
		c := clone(s)
		c.Topics[i].Partitions--
		for j := range c.Clients.Producers {
			if p := &c.Clients.Producers[j]; p.Topic == t.Name {
				p.Partitions = slices.DeleteFunc(slices.Clone(p.Partitions), func(n int32) bool { return n >= last })
			}
		}
		for j := range c.Clients.Readers {
			if r := &c.Clients.Readers[j]; r.Topic == t.Name {
				r.Partitions = slices.DeleteFunc(slices.Clone(r.Partitions), func(n int32) bool { return n >= last })
			}
		}
		c.Schedule = slices.DeleteFunc(c.Schedule, func(e scenario.Event) bool {
			return e.Target.Role == scenario.RoleLeader && e.Target.Topic == t.Name && e.Target.Partition >= last
		})
		out = append(out, candidate{fmt.Sprintf("topic %s with %d partitions", t.Name, t.Partitions-1), c})
	}
	return out
}
