package harness

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// proxy fronts one listener of one node: every connection to the node's
// advertised (or voter) address arrives here, is attributed to the
// endpoint that opened it (see Cluster.identify), and is forwarded to the
// node's real listener by two pumps, one per direction, each obeying its
// link's state in Links.
type proxy struct {
	node     Endpoint
	target   string
	listener net.Listener
	links    *Links
	identify func(net.Conn) Endpoint

	mutex       sync.Mutex
	closed      bool
	connections map[*proxiedConnection]struct{}
	running     sync.WaitGroup
}

// startProxy listens on listener and forwards to target, the real
// listener of node.
func startProxy(node Endpoint, listener net.Listener, target string, links *Links, identify func(net.Conn) Endpoint) *proxy {
	p := &proxy{
		node: node, target: target, listener: listener, links: links, identify: identify,
		connections: map[*proxiedConnection]struct{}{},
	}
	p.running.Add(1)
	go p.accept()
	return p
}

// Addr is where the proxy listens.
func (p *proxy) Addr() string { return p.listener.Addr().String() }

// Close stops accepting, breaks every connection, and waits for the
// pumps to end.
func (p *proxy) Close() {
	p.mutex.Lock()
	p.closed = true
	connections := make([]*proxiedConnection, 0, len(p.connections))
	for c := range p.connections {
		connections = append(connections, c)
	}
	p.mutex.Unlock()
	p.listener.Close()
	for _, c := range connections {
		c.close(false)
	}
	p.running.Wait()
}

func (p *proxy) accept() {
	defer p.running.Done()
	for {
		conn, err := p.listener.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A transient accept failure (out of descriptors): back off
			// rather than spin.
			time.Sleep(acceptRetryDelay)
			continue
		}
		p.running.Add(1)
		go p.serve(conn)
	}
}

// serve attributes one connection and forwards it.
func (p *proxy) serve(downstream net.Conn) {
	defer p.running.Done()
	source := p.identify(downstream)
	up, down := Link{source, p.node}, Link{p.node, source}
	upState, _ := p.links.State(up)
	downState, _ := p.links.State(down)
	if upState.Mode == Reset || downState.Mode == Reset {
		abort(downstream)
		return
	}
	upstream, err := net.DialTimeout("tcp", p.target, proxyDialTimeout)
	if err != nil {
		// The node is down: the client sees its connection close, as it
		// would see a refused connection.
		abort(downstream)
		return
	}
	c := &proxiedConnection{client: downstream, server: upstream, done: make(chan struct{})}
	p.mutex.Lock()
	if p.closed || len(p.connections) >= proxyConnectionsMax {
		p.mutex.Unlock()
		abort(downstream)
		abort(upstream)
		return
	}
	p.connections[c] = struct{}{}
	p.mutex.Unlock()
	defer func() {
		p.mutex.Lock()
		delete(p.connections, c)
		p.mutex.Unlock()
	}()
	var pumps sync.WaitGroup
	pumps.Add(2)
	go func() { defer pumps.Done(); c.pump(p.links, up, downstream, upstream) }()
	go func() { defer pumps.Done(); c.pump(p.links, down, upstream, downstream) }()
	pumps.Wait()
}

// proxiedConnection is a client-side and a server-side TCP connection
// joined by two pumps. When either side ends, both are closed.
type proxiedConnection struct {
	client, server net.Conn
	once           sync.Once
	done           chan struct{}
}

// close ends both sides; reset makes them end with a TCP reset rather
// than an orderly close.
func (c *proxiedConnection) close(reset bool) {
	c.once.Do(func() {
		close(c.done)
		if reset {
			abort(c.client)
			abort(c.server)
			return
		}
		c.client.Close()
		c.server.Close()
	})
}

// chunk is bytes read from one side, with when they were read: a delayed
// link forwards them that much later.
type chunk struct {
	bytes  []byte
	readAt time.Time
}

// pump forwards src to dst as link allows: a reader takes chunks off src
// into a bounded queue (so a stalled link pushes back on the sender once
// the queue and the kernel's buffers are full), and the writer forwards
// them in order once the link passes and their delay is over.
func (c *proxiedConnection) pump(links *Links, link Link, src, dst net.Conn) {
	queue := make(chan chunk, chunkQueueMax)
	go func() {
		defer close(queue)
		for {
			buffer := make([]byte, chunkBytesMax)
			n, err := src.Read(buffer)
			if n > 0 {
				select {
				case queue <- chunk{bytes: buffer[:n], readAt: time.Now()}:
				case <-c.done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		state, changed := links.State(link)
		if state.Mode == Reset {
			c.close(true)
			return
		}
		var next chunk
		var open bool
		select {
		case next, open = <-queue:
		case <-changed:
			continue
		case <-c.done:
			return
		}
		if !open {
			// The sender closed (or its side broke) and everything it
			// sent before has been forwarded.
			c.close(false)
			return
		}
		if !c.waitToForward(links, link, next) {
			return
		}
		// Counted before the write, so that whoever sees the reply the
		// bytes provoke also sees them counted; a short write takes back
		// what did not go through.
		links.count(link, len(next.bytes))
		written, err := dst.Write(next.bytes)
		if written < len(next.bytes) {
			links.uncount(link, len(next.bytes)-written)
		}
		if err != nil {
			c.close(false)
			return
		}
	}
}

// waitToForward waits until link passes and next's delay is over. It
// reports false if the connection ended meanwhile (a Reset ends it).
func (c *proxiedConnection) waitToForward(links *Links, link Link, next chunk) bool {
	for {
		state, changed := links.State(link)
		switch state.Mode {
		case Reset:
			c.close(true)
			return false
		case Stall:
			select {
			case <-changed:
				continue
			case <-c.done:
				return false
			}
		}
		wait := time.Until(next.readAt.Add(state.Delay))
		if wait <= 0 {
			return true
		}
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-changed:
			timer.Stop()
		case <-c.done:
			timer.Stop()
			return false
		}
	}
}

// abort closes conn with a TCP reset (SO_LINGER 0), as a broken network
// path looks to the peer.
func abort(conn net.Conn) {
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	conn.Close()
}

// listenLoopback opens a listener on a free loopback port.
func listenLoopback() (net.Listener, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("harness: listening on loopback: %w", err)
	}
	return listener, nil
}
