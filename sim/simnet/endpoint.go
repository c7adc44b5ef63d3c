package simnet

import (
	"fmt"
	"slices"
	"strconv"

	"sluice/core"
	"sluice/sim/kernel"
)

// Endpoint is one host's place on the network: what a simulated machine or
// client dials from and listens on. It implements core.Network.
type Endpoint struct {
	network *Network
	host    string
	owner   *kernel.Process

	listeners []*listener // this host's listening addresses, in creation order

	// egressFreeAt is when the host's outgoing link finishes sending what
	// it already holds; a frame launched earlier waits for it (bandwidth).
	egressFreeAt int64

	// portNext is the next ephemeral port this host dials from.
	portNext int
}

// listener is one listening address.
type listener struct {
	endpoint *Endpoint
	address  string
	acceptor core.Acceptor
}

var _ core.Network = (*Endpoint)(nil)

// Host is the endpoint's host name, the name Cut and Partition use.
func (e *Endpoint) Host() string { return e.host }

// Dial implements core.Network. It returns at once. With a listener at addr
// it starts the handshake (SYN, SYN-ACK: one round trip), and frames sent
// before it completes wait on the dialer. Otherwise the handler learns of
// the failure through Closed: ErrConnectionRefused after a round trip, or
// ErrConnectTimeout after Faults.ConnectTimeout when a cut separates the two
// hosts.
func (e *Endpoint) Dial(addr string, h core.Handler) core.Conn {
	if h == nil {
		panic(fmt.Sprintf("simnet: %s dialed %q with a nil handler", e.host, addr))
	}
	if !e.owner.Alive() {
		panic(fmt.Sprintf("simnet: %s dialed %q while its process is not running", e.host, addr))
	}
	n := e.network
	n.stats.Dials++
	host, ok := splitAddress(addr)
	if !ok {
		return e.failDial(addr, h, fmt.Errorf("%w: %q", ErrBadAddress, addr), 0)
	}
	if len(n.connections) >= connectionsMax {
		return e.failDial(addr, h, ErrTooManyConnections, 0)
	}
	l := n.listeners[addr]
	if l != nil && l.endpoint.owner.Alive() {
		return n.connect(e, l, h)
	}
	// Nobody answers. Whether the dialer hears "refused" or nothing at all
	// depends on whether the RST could come back.
	if n.isCut(e.host, host) || n.isCut(host, e.host) {
		n.stats.DialsTimedOut++
		return e.failDial(addr, h, ErrConnectTimeout, int64(n.faults.connectTimeout()))
	}
	n.stats.DialsRefused++
	return e.failDial(addr, h, ErrConnectionRefused, n.latency()+n.latency())
}

// Listen makes acceptor serve addr ("host:port"; the host part is a name for
// the address and need not be the endpoint's). It fails if addr is malformed
// or taken, or the endpoint's process is not running. The listener lasts
// until the endpoint crashes.
func (e *Endpoint) Listen(addr string, acceptor core.Acceptor) error {
	if acceptor == nil {
		return fmt.Errorf("simnet: listen on %q with a nil acceptor", addr)
	}
	if _, ok := splitAddress(addr); !ok {
		return fmt.Errorf("%w: listen on %q", ErrBadAddress, addr)
	}
	if !e.owner.Alive() {
		return fmt.Errorf("simnet: %s cannot listen on %q: its process is not running", e.host, addr)
	}
	n := e.network
	if existing := n.listeners[addr]; existing != nil {
		return fmt.Errorf("simnet: %s cannot listen on %q: address in use by %s", e.host, addr, existing.endpoint.host)
	}
	l := &listener{endpoint: e, address: addr, acceptor: acceptor}
	n.listeners[addr] = l
	e.listeners = append(e.listeners, l)
	return nil
}

// Crash is what the network sees when the endpoint's process dies: its
// listeners vanish, everything queued to or from it is lost, its handlers
// hear nothing more, and each peer receives an RST after a latency (later,
// if a cut lies in the way). Call it after the owner process has crashed.
func (e *Endpoint) Crash() {
	n := e.network
	n.stats.Crashes++
	n.note("crash %s", e.host)
	for _, l := range e.listeners {
		delete(n.listeners, l.address)
	}
	e.listeners = nil
	// Crashing an end may finish its connection, which edits the slice.
	for _, c := range slices.Clone(n.connections) {
		for _, x := range c.ends {
			if x.endpoint == e {
				x.crash()
			}
		}
	}
}

// ephemeralAddress returns "host:port" for the next connection this
// endpoint dials.
func (e *Endpoint) ephemeralAddress() string {
	port := e.portNext
	e.portNext++
	if e.portNext > ephemeralPortLast {
		e.portNext = ephemeralPortFirst
	}
	// Appended rather than formatted with Sprintf: one allocation, for
	// the string itself. Every dial makes one.
	address := make([]byte, 0, 32)
	address = append(address, e.host...)
	address = append(address, ':')
	address = strconv.AppendInt(address, int64(port), 10)
	return string(address)
}

// failDial returns a connection that never got anywhere: after delay its
// handler is told err.
func (e *Endpoint) failDial(addr string, h core.Handler, err error, delay int64) core.Conn {
	f := &failedDial{remoteAddr: addr, owner: e.owner, incarnation: e.owner.Incarnation(), handler: h, err: err}
	e.network.kernel.Post(delay, e.owner, "net.dial-failed", f)
	return f
}

// failedDial is the core.Conn of a dial that found nobody to talk to, and
// the action of the event that reports the failure (see Run).
type failedDial struct {
	remoteAddr string
	owner      *kernel.Process
	// incarnation is the owner's when it dialed: a crash ends the dial too.
	incarnation uint64
	reported    bool // the handler has been told
	closed      bool // Close was called, so the handler must not be told
	handler     core.Handler
	err         error // what the handler is told
}

// Run reports the failure to the handler, unless the dialer closed the
// connection first.
func (f *failedDial) Run() {
	f.reported = true
	if !f.closed {
		f.handler.Closed(f.err)
	}
}

// Send pretends the frame is queued until the failure is known, as a
// connecting socket does.
func (f *failedDial) Send([]byte) bool {
	return !f.reported && !f.closed && f.owner.Incarnation() == f.incarnation
}

// Close stops the failure from being reported.
func (f *failedDial) Close() { f.closed = true }

func (f *failedDial) PauseReceiving()  {}
func (f *failedDial) ResumeReceiving() {}

// RemoteAddr is the address that was dialed.
func (f *failedDial) RemoteAddr() string { return f.remoteAddr }
