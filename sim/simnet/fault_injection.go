package simnet

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Cut stops frames from host `from` to host `to`, one way. Segments on that
// path wait, in order, until the link heals; the reverse path keeps working.
// Hosts need not exist yet: a connection made later over a cut link starts
// stalled.
func (n *Network) Cut(from, to string) {
	l := link{from, to}
	if n.cuts[l] {
		return
	}
	n.cuts[l] = true
	n.note("cut %s->%s", from, to)
	for _, c := range n.connections {
		for _, d := range c.directions {
			if d.sender.endpoint.host == from && d.receiver.endpoint.host == to {
				d.stall()
			}
		}
	}
}

// Partition cuts both ways between every host of a and every host of b.
// Hosts in neither group keep talking to both: a bridge is two partitions
// that leave the bridging host out.
func (n *Network) Partition(a, b []string) {
	n.note("partition [%s] | [%s]", strings.Join(a, " "), strings.Join(b, " "))
	for _, x := range a {
		for _, y := range b {
			n.Cut(x, y)
			n.Cut(y, x)
		}
	}
}

// HealLink makes the link from host `from` to host `to` work again; what
// waited on it moves again, in order, from now.
func (n *Network) HealLink(from, to string) {
	l := link{from, to}
	if !n.cuts[l] {
		return
	}
	delete(n.cuts, l)
	n.note("heal %s->%s", from, to)
	for _, c := range n.connections {
		for _, d := range c.directions {
			if d.sender.endpoint.host == from && d.receiver.endpoint.host == to {
				d.resume()
			}
		}
	}
}

// SlowLink puts host on a slow link for a window, until restore is
// called: every segment the host sends or receives from now on takes low
// to high one way, in place of the network's latency (when both ends are
// slow, the slower bounds). Windows may overlap: the latest one's latency
// applies, and the link is restored when the last one ends. Segments
// already launched keep their delivery times, and TCP's order holds: a
// segment never overtakes one sent before it on its connection, so the end
// of a slow window drains at the pace of its last segments. restore may be
// called more than once, and after RestoreLinks; it panics on bounds a
// scenario should have refused.
func (n *Network) SlowLink(host string, low, high time.Duration) (restore func()) {
	if low < 0 || high < low {
		panic(fmt.Sprintf("simnet: slow link latency %v-%v", low, high))
	}
	link := n.slow[host]
	if link == nil {
		link = &slowLink{}
		n.slow[host] = link
	}
	link.latencies = latencies{int64(low), int64(high)}
	link.windows++
	n.note("slow link %s %v-%v", host, low, high)
	ended := false
	return func() {
		if ended || n.slow[host] != link {
			return // ended already, or every link was restored since
		}
		ended = true
		if link.windows--; link.windows == 0 {
			delete(n.slow, host)
			n.note("link of %s restored", host)
		}
	}
}

// RestoreLinks takes every host off its slow link at once (a heal).
func (n *Network) RestoreLinks() {
	for _, host := range n.SlowHosts() {
		delete(n.slow, host)
		n.note("link of %s restored", host)
	}
}

// SlowHosts lists the hosts on a slow link now, sorted.
func (n *Network) SlowHosts() []string {
	hosts := make([]string, 0, len(n.slow))
	for host := range n.slow { // order-independent: sorted below
		hosts = append(hosts, host)
	}
	slices.Sort(hosts)
	return hosts
}

// Heal makes every link work again; what waited moves again, in order.
func (n *Network) Heal() {
	if len(n.cuts) == 0 {
		return
	}
	clear(n.cuts)
	n.note("heal all")
	for _, c := range n.connections {
		for _, d := range c.directions {
			d.resume()
		}
	}
}

// ResetConnections breaks every connection with an end on host, as an RST
// from the network would: frames in flight either way are dropped and both
// ends get Closed(ErrConnectionReset) after a latency. It returns how many
// connections it broke.
func (n *Network) ResetConnections(host string) int {
	count := 0
	// Breaking a connection removes it from the slice.
	for _, c := range slices.Clone(n.connections) {
		if c.ends[sideDialer].endpoint.host != host && c.ends[sideListener].endpoint.host != host {
			continue
		}
		if c.breakConnection(ErrConnectionReset, true) {
			count++
		}
	}
	n.stats.Resets += int64(count)
	n.note("reset %s: %d connections", host, count)
	return count
}

// ResetRandomConnection breaks one live connection, chosen uniformly, as
// ResetConnections does. It reports false when there was none.
func (n *Network) ResetRandomConnection() bool {
	if len(n.connections) == 0 {
		return false
	}
	c := n.connections[n.rng.IntN(len(n.connections))]
	n.note("reset connection %d %s->%s", c.number, c.ends[sideDialer].endpoint.host, c.listener.address)
	c.breakConnection(ErrConnectionReset, true)
	n.stats.Resets++
	return true
}
