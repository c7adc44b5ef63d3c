package simnet

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sluice/sim/kernel"
	"strings"
)

// Network is one simulated network joining every machine and client of a run.
// It owns the links between hosts (cut or whole), the listening addresses,
// and every live connection.
type Network struct {
	kernel *kernel.Kernel
	rng    *rand.Rand
	faults Faults

	endpointsByHost map[string]*Endpoint // lookups only
	listeners       map[string]*listener // by address; lookups only
	cuts            map[link]bool        // lookups only; the links now cut
	slow            map[string]*slowLink // lookups only; hosts on a slow link
	connections     []*connection        // live connections, in creation order
	connectionsMade uint64               // numbers connections for traces

	stats Stats
}

// link is the one-way path from one host to another.
type link struct{ from, to string }

// latencies bounds a one-way latency, in nanoseconds.
type latencies struct{ low, high int64 }

// slowLink is a host's slow link: the latency of the latest window put on
// it, and how many windows are in force.
type slowLink struct {
	latencies
	windows int
}

// New returns a network on kernel k that draws every random choice from rng.
// It panics if faults are invalid: a scenario that builds bad faults has a
// bug.
func New(k *kernel.Kernel, rng *rand.Rand, faults Faults) *Network {
	if k == nil || rng == nil {
		panic("simnet: New needs a kernel and a PRNG")
	}
	n := &Network{
		kernel:          k,
		rng:             rng,
		endpointsByHost: map[string]*Endpoint{},
		listeners:       map[string]*listener{},
		cuts:            map[link]bool{},
		slow:            map[string]*slowLink{},
	}
	n.SetFaults(faults)
	return n
}

// SetFaults changes the network's conditions from now on. Segments already
// launched keep the times they were given. It panics if f is invalid.
func (n *Network) SetFaults(f Faults) {
	if err := f.Validate(); err != nil {
		panic(err.Error())
	}
	n.faults = f
}

// Faults returns the network's current conditions.
func (n *Network) Faults() Faults { return n.faults }

// Endpoint attaches a host to the network: one per simulated machine or
// client. owner is the process whose crash the endpoint's Crash follows; it
// owns every event that delivers something to this host. Host names must be
// unique and non-empty.
func (n *Network) Endpoint(host string, owner *kernel.Process) *Endpoint {
	if host == "" || strings.Contains(host, ":") {
		panic(fmt.Sprintf("simnet: bad host name %q", host))
	}
	if owner == nil {
		panic(fmt.Sprintf("simnet: endpoint %q needs an owner process", host))
	}
	if n.endpointsByHost[host] != nil {
		panic(fmt.Sprintf("simnet: host %q already has an endpoint", host))
	}
	e := &Endpoint{network: n, host: host, owner: owner, portNext: ephemeralPortFirst}
	n.endpointsByHost[host] = e
	return e
}

// Stats returns the network's counters.
func (n *Network) Stats() Stats {
	s := n.stats
	s.ConnectionsOpen = len(n.connections)
	return s
}

// now is the kernel's virtual time.
func (n *Network) now() int64 { return n.kernel.Now() }

// note records a fault or a notable network event in the run's trace.
func (n *Network) note(format string, args ...any) {
	n.kernel.Trace().Note(n.now(), "net", fmt.Sprintf(format, args...))
}

// latency draws one segment's one-way latency in nanoseconds.
func (n *Network) latency() int64 {
	return n.draw(latencies{int64(n.faults.LatencyMin), int64(n.faults.LatencyMax)})
}

// latencyBetween draws the latency of a segment from one host to another:
// a slow link's, when either host is on one (the slower of the two), else
// the network's. With no slow link, as most of a run is, it draws exactly
// as latency does.
func (n *Network) latencyBetween(from, to string) int64 {
	if len(n.slow) == 0 {
		return n.latency()
	}
	a, b := n.slow[from], n.slow[to]
	switch {
	case a != nil && b != nil:
		return n.draw(latencies{max(a.low, b.low), max(a.high, b.high)})
	case a != nil:
		return n.draw(a.latencies)
	case b != nil:
		return n.draw(b.latencies)
	}
	return n.latency()
}

func (n *Network) draw(l latencies) int64 {
	if l.high <= l.low {
		return l.low
	}
	return l.low + n.rng.Int64N(l.high-l.low+1)
}

// isCut reports whether frames from host `from` to host `to` are stopped.
// With no cut at all, as most of a run is, it answers without hashing the
// two names: it runs at every delivery.
func (n *Network) isCut(from, to string) bool {
	return len(n.cuts) > 0 && n.cuts[link{from, to}]
}

// addConnection registers a new connection, in creation order.
func (n *Network) addConnection(c *connection) {
	n.connectionsMade++
	c.number = n.connectionsMade
	n.connections = append(n.connections, c)
}

// removeConnection forgets a connection that is over.
func (n *Network) removeConnection(c *connection) {
	i := slices.Index(n.connections, c)
	if i < 0 {
		panic(fmt.Sprintf("simnet: connection %d is over but was not registered", c.number))
	}
	n.connections = slices.Delete(n.connections, i, i+1)
}

// splitAddress returns the host part of "host:port", and whether addr has
// that form with a non-empty host and a decimal port.
func splitAddress(addr string) (host string, ok bool) {
	i := strings.LastIndexByte(addr, ':')
	if i <= 0 || i == len(addr)-1 {
		return "", false
	}
	for _, r := range addr[i+1:] {
		if r < '0' || r > '9' {
			return "", false
		}
	}
	return addr[:i], true
}
