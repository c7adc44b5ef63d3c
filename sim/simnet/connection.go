package simnet

import (
	"fmt"
	"io"
	"sluice/core"
	"sluice/sim/kernel"
)

// The two sides of a connection, as indexes into connection.ends and
// connection.directions.
const (
	sideDialer   = 0
	sideListener = 1
)

// connection is one simulated TCP connection: two ends, and two directions
// each carrying segments from one end to the other.
//
// Invariant: the connection is in Network.connections exactly while it is
// not over; once over, both ends are done and both directions are empty.
type connection struct {
	network  *Network
	number   uint64 // creation order, for traces and messages
	listener *listener

	ends [2]*end
	// directions[s] carries segments from ends[s] to ends[1-s].
	directions [2]*direction

	// endsStorage and directionsStorage are what ends and directions
	// point to: kept in the connection, so that dialing allocates one
	// object instead of five.
	endsStorage       [2]end
	directionsStorage [2]direction

	// connectTimer is the handshake's timeout, whose action is the
	// connection (see Run); the zero Handle once the handshake is
	// complete or the connection is over.
	connectTimer kernel.Handle

	over bool
}

// end is one end of a connection, the core.Conn its owner holds.
type end struct {
	connection *connection
	side       int
	endpoint   *Endpoint
	remoteAddr string

	// handler receives this end's frames and its Closed. The dialer's is
	// known from the start; the listener's comes from Accept.
	handler core.Handler

	// paused holds deliveries of frames and FINs to this end (see
	// PauseReceiving).
	paused bool

	// done is set when this end may receive nothing more: it closed, its
	// process crashed, it received a FIN or RST, or the connection broke
	// (its Closed is then already scheduled). Send on a done end fails.
	done bool

	// silenced is set when the owner closed this end or its process
	// crashed: a Closed scheduled before then must not run.
	silenced bool
}

var _ core.Conn = (*end)(nil)

// connect creates a connection from dialer to l and sends the SYN.
func (n *Network) connect(dialer *Endpoint, l *listener, h core.Handler) *end {
	c := &connection{network: n, listener: l}
	c.endsStorage[sideDialer] = end{connection: c, side: sideDialer, endpoint: dialer, remoteAddr: l.address, handler: h}
	c.endsStorage[sideListener] = end{connection: c, side: sideListener, endpoint: l.endpoint, remoteAddr: dialer.ephemeralAddress()}
	for side := range c.ends {
		c.ends[side] = &c.endsStorage[side]
	}
	for side := range c.directions {
		c.directions[side] = &c.directionsStorage[side]
		c.directions[side].init(c, c.ends[side], c.ends[1-side])
	}
	// The dialer sends data only once the SYN-ACK is back.
	c.directions[sideDialer].held = true
	n.addConnection(c)
	for _, d := range c.directions {
		if n.isCut(d.sender.endpoint.host, d.receiver.endpoint.host) {
			d.stall()
		}
	}
	c.connectTimer = n.kernel.ScheduleHandle(int64(n.faults.connectTimeout()), nil, "net.connect-timeout", c)
	c.directions[sideDialer].enqueue(segment{kind: segmentSyn})
	return c.ends[sideDialer]
}

// Run is the handshake's timeout (the connection is its kernel.Action):
// the connection breaks if the handshake has not completed.
func (c *connection) Run() {
	c.connectTimer = kernel.Handle{}
	if c.breakConnection(ErrConnectTimeout, false) {
		c.network.stats.DialsTimedOut++
	}
}

// Send implements core.Conn: it queues frame on this end's outgoing
// direction and never calls a handler. It fails once this end is done; it
// succeeds, but the frame is lost, when the other end has closed or crashed
// and this end has not heard yet, as a TCP write does.
func (x *end) Send(frame []byte) bool {
	c := x.connection
	if x.done {
		return false
	}
	n := c.network
	out := c.directions[x.side]
	if out.dataBytes+len(frame) > directionQueueBytesMax || len(out.queue) >= directionQueueFramesMax {
		n.stats.Overflows++
		c.breakConnection(ErrSendQueueFull, false)
		return false
	}
	n.stats.FramesSent++
	if out.receiverGone {
		n.stats.FramesDropped++
		return true
	}
	out.enqueue(segment{kind: segmentData, frame: frame})
	return true
}

// Close implements core.Conn: frames already sent still go, followed by a
// FIN that tells the other end io.EOF; nothing more reaches this end, and
// this end's handler is not told.
func (x *end) Close() {
	x.silenced = true
	if x.done {
		return
	}
	x.done = true
	c := x.connection
	if c.ends[1-x.side].done {
		c.retire()
		return
	}
	in := c.directions[1-x.side]
	in.dropData()
	in.receiverGone = true
	c.directions[x.side].enqueue(segment{kind: segmentFin})
}

// RemoteAddr implements core.Conn.
func (x *end) RemoteAddr() string { return x.remoteAddr }

// PauseReceiving implements core.Conn: frames (and a FIN behind them) wait in
// the direction toward this end until ResumeReceiving. A reset still arrives.
func (x *end) PauseReceiving() { x.paused = true }

// ResumeReceiving implements core.Conn.
func (x *end) ResumeReceiving() {
	if !x.paused {
		return
	}
	x.paused = false
	x.connection.directions[1-x.side].scheduleHead()
}

// crash ends this end as its process dies: what it had queued either way is
// lost and the other end is sent an RST.
func (x *end) crash() {
	x.silenced = true
	if x.done {
		return
	}
	x.done = true
	c := x.connection
	peer := c.ends[1-x.side]
	if peer.done {
		c.retire()
		return
	}
	in, out := c.directions[1-x.side], c.directions[x.side]
	in.drop()
	in.receiverGone = true
	out.drop()
	if peer.handler == nil {
		// The listener never accepted: its SYN was in flight and is gone,
		// so nobody there knows the connection existed.
		peer.done = true
		c.retire()
		return
	}
	// The RST replaces whatever the dialer held back for the handshake.
	out.held = false
	out.enqueue(segment{kind: segmentReset})
}

// breakConnection ends the connection at once: everything queued is dropped
// and every end still listening is told err, each by an event owned by its
// own process (after a latency when latent, as a reset from the network
// travels; at once otherwise, as a local timeout fires). It reports whether
// the connection was still alive.
func (c *connection) breakConnection(err error, latent bool) bool {
	if c.over {
		return false
	}
	n := c.network
	for _, x := range c.ends {
		if x.done {
			continue
		}
		x.done = true
		if x.handler == nil {
			continue
		}
		delay := int64(0)
		if latent {
			delay = n.latency()
		}
		n.kernel.Post(delay, x.endpoint.owner, "net.closed", kernel.Func(func() {
			if !x.silenced {
				x.handler.Closed(err)
			}
		}))
	}
	c.retire()
	return true
}

// retire removes a connection both of whose ends are done.
func (c *connection) retire() {
	if c.over {
		return
	}
	for _, x := range c.ends {
		if !x.done {
			panic(fmt.Sprintf("simnet: connection %d ended while its %s end is still open", c.number, x.endpoint.host))
		}
	}
	c.over = true
	for _, d := range c.directions {
		d.drop()
	}
	c.connectTimer.Stop()
	c.connectTimer = kernel.Handle{}
	c.network.removeConnection(c)
}

// receive acts on a segment d just delivered to its receiver. It runs as the
// receiver's event, after d has scheduled its next head, so a handler may
// call anything (Send, Close, Dial, a fault) from inside it.
func (c *connection) receive(d *direction, s segment) {
	n := c.network
	x := d.receiver
	switch s.kind {
	case segmentData:
		if x.done || x.handler == nil {
			panic(fmt.Sprintf("simnet: connection %d delivered a frame to a %s end that cannot take it", c.number, x.endpoint.host))
		}
		n.stats.FramesDelivered++
		n.stats.BytesDelivered += int64(len(s.frame))
		x.handler.Frame(s.frame)
	case segmentSyn:
		c.accept()
	case segmentSynAck:
		c.connectTimer.Stop()
		c.connectTimer = kernel.Handle{}
		c.directions[sideDialer].release()
		for _, d := range c.directions {
			d.armStallTimer()
		}
	case segmentFin, segmentReset:
		if x.done {
			panic(fmt.Sprintf("simnet: connection %d delivered a %s to a done %s end", c.number, s.kind, x.endpoint.host))
		}
		x.done = true
		c.retire()
		if x.handler != nil {
			if s.kind == segmentFin {
				x.handler.Closed(io.EOF)
			} else {
				x.handler.Closed(ErrConnectionReset)
			}
		}
	default:
		panic(fmt.Sprintf("simnet: connection %d delivered a segment of unknown kind %d", c.number, s.kind))
	}
}

// accept hands the listener's end to its Acceptor when the SYN arrives, and
// answers with a SYN-ACK ahead of anything the acceptor sends.
func (c *connection) accept() {
	x := c.ends[sideListener]
	if x.done || x.handler != nil {
		panic(fmt.Sprintf("simnet: connection %d received a SYN on a listener end that is done or accepted", c.number))
	}
	c.network.stats.Accepts++
	c.directions[sideListener].enqueue(segment{kind: segmentSynAck})
	handler := c.listener.acceptor.Accept(x)
	if handler == nil {
		panic(fmt.Sprintf("simnet: the acceptor of %s returned a nil Handler", c.listener.address))
	}
	x.handler = handler
}
