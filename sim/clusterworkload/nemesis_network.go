package clusterworkload

import (
	"fmt"
	"strings"

	"sluice/sim"
	"sluice/sim/scenario"
)

// Network faults, all built from one-way cuts of simnet: a cut link holds
// what is sent over it until it heals (as TCP retransmits across an
// outage), so a partition delays and reorders, and connections break only
// through their own timeouts or a reset.

func (m *nemesis) applyNetworkFault(e scenario.Event) bool {
	r := m.run
	if e.Kind == scenario.KindHeal {
		// Counted only when it ended a fault: a heal with nothing to
		// end reached nothing.
		r.note("heal the network")
		ended := false
		for i := 0; i < len(m.active); {
			if f := m.active[i]; f.network {
				m.end(f)
				ended = true
				continue
			}
			i++
		}
		return ended
	}
	if e.Kind == scenario.KindReset {
		if e.Target.Role == scenario.RoleAny {
			return r.network.ResetRandomConnection()
		}
		n := m.resolve(e.Target)
		if n == nil {
			return false
		}
		r.network.ResetConnections(n.name)
		r.recordFault(sim.EventFault, "reset-"+n.name)
		return true
	}
	var links []link
	var label string
	if e.Kind == scenario.KindPartition {
		left, right := m.nodeNames(e.Sides[0]), m.nodeNames(e.Sides[1])
		links = bothWays(left, right)
		label = fmt.Sprintf("partition-%s|%s", strings.Join(left, "+"), strings.Join(right, "+"))
	} else {
		n := m.resolve(e.Target)
		if n == nil {
			return false
		}
		links, label = m.cutsAround(e.Kind, n)
	}
	r.note(fmt.Sprintf("%s for %v", label, e.For))
	for _, l := range links {
		m.cut(l)
	}
	m.lasting(label, true, e.For, func() {
		for _, l := range links {
			m.uncut(l)
		}
	})
	return true
}

// cutsAround returns the links a fault aimed at n cuts, and its label.
func (m *nemesis) cutsAround(kind scenario.Kind, n *node) ([]link, string) {
	r := m.run
	var others []string
	for _, o := range r.nodes {
		if o != n {
			others = append(others, o.name)
		}
	}
	self := []string{n.name}
	switch kind {
	case scenario.KindIsolate:
		// Cut off from everyone: the other nodes and every client.
		everyone := others
		for _, c := range r.clients {
			everyone = append(everyone, c.Name())
		}
		return bothWays(self, everyone), "isolate-" + n.name
	case scenario.KindCutFrom:
		return oneWay(self, others), "cut-from-" + n.name
	case scenario.KindCutTo:
		return oneWay(others, self), "cut-to-" + n.name
	case scenario.KindStrand:
		// Cut off from the other nodes both ways; clients still reach
		// it, and it still answers them as it last knew the cluster.
		return bothWays(self, others), "strand-" + n.name
	case scenario.KindBridge:
		// The others in two halves, by id; only n joins them.
		half := (len(others) + 1) / 2
		left, right := others[:half], others[half:]
		return bothWays(left, right), fmt.Sprintf("bridge-%s-between-%s|%s", n.name, strings.Join(left, "+"), strings.Join(right, "+"))
	case scenario.KindMinority:
		// n and the nodes after it, a minority, cut from the rest;
		// clients still reach both sides.
		size := max(1, (len(r.nodes)-1)/2)
		var minority, majority []string
		for i := range r.nodes {
			o := r.nodes[(n.id-1+i)%len(r.nodes)]
			if i < size {
				minority = append(minority, o.name)
			} else {
				majority = append(majority, o.name)
			}
		}
		return bothWays(minority, majority), fmt.Sprintf("minority-%s|%s", strings.Join(minority, "+"), strings.Join(majority, "+"))
	}
	panic(fmt.Sprintf("clusterworkload: %s is not a network fault around a node", kind))
}

func (m *nemesis) nodeNames(ids []int) []string {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = m.run.nodes[id-1].name
	}
	return names
}

// cut adds a fault to a link, cutting it if it was whole.
func (m *nemesis) cut(l link) {
	m.cuts[l]++
	if m.cuts[l] == 1 {
		m.run.network.Cut(l.from, l.to)
	}
}

// uncut removes a fault from a link, healing it when none is left.
func (m *nemesis) uncut(l link) {
	if m.cuts[l] == 0 {
		return // the heal already healed it
	}
	m.cuts[l]--
	if m.cuts[l] == 0 {
		delete(m.cuts, l)
		m.run.network.HealLink(l.from, l.to)
	}
}

func oneWay(from, to []string) []link {
	var links []link
	for _, a := range from {
		for _, b := range to {
			links = append(links, link{a, b})
		}
	}
	return links
}

func bothWays(a, b []string) []link {
	return append(oneWay(a, b), oneWay(b, a)...)
}

// applySlowNet puts a node on a slow link for the event's window: every
// segment to and from it, clients' included, takes the event's latency.
// A heal ends it with the cuts. Windows that overlap on one node take the
// latest latency, and the last to end restores the link (simnet).
func (m *nemesis) applySlowNet(e scenario.Event) bool {
	n := m.resolve(e.Target)
	if n == nil {
		return false
	}
	r := m.run
	label := "slow-net-" + n.name
	r.note(fmt.Sprintf("%s %v-%v for %v", label, e.LatencyMin, e.LatencyMax, e.For))
	m.lasting(label, true, e.For, r.network.SlowLink(n.name, e.LatencyMin, e.LatencyMax))
	return true
}
