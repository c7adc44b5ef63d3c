package peer

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/wire"
)

// Limits of a peer client.
const (
	// pendingPerPeerMax bounds the requests waiting on one connection.
	pendingPerPeerMax = 1024
	// reconnectBackoffMin and reconnectBackoffMax bound the wait before
	// redialing a peer whose connection broke, doubling in between.
	reconnectBackoffMin = 50 * time.Millisecond
	reconnectBackoffMax = 2 * time.Second
)

// Errors a request can fail with. ErrConnectionLost and ErrTimeout leave
// the outcome unknown: the peer may have acted on the request.
var (
	ErrUnknownPeer    = errors.New("peer: no address for node")
	ErrConnectionLost = errors.New("peer: connection lost")
	ErrTimeout        = errors.New("peer: request timed out")
	ErrBackoff        = errors.New("peer: reconnecting after a failure")
	ErrTooManyPending = errors.New("peer: too many requests pending")
	ErrClosed         = errors.New("peer: client closed")
	errBadResponse    = errors.New("peer: undecodable response")
)

// Client sends requests to other nodes by id.
type Client struct {
	w        core.World
	log      *slog.Logger
	clientID string
	address  map[int32]string
	conns    map[int32]*connection
	closed   bool
	// encoder encodes every request the client sends, on the loop.
	encoder wire.Encoder
}

// New returns a client that identifies itself to peers as clientID (Kafka
// brokers use "broker-<id>-...", which shows up in their logs).
func New(w core.World, clientID string) *Client {
	return &Client{
		w:        w,
		log:      w.Log.With("component", "peer"),
		clientID: clientID,
		address:  map[int32]string{},
		conns:    map[int32]*connection{},
	}
}

// SetAddress tells the client where a node listens. A changed address
// drops the old connection.
func (c *Client) SetAddress(node int32, addr string) {
	if c.address[node] == addr {
		return
	}
	c.address[node] = addr
	if conn, ok := c.conns[node]; ok {
		conn.fail(ErrConnectionLost)
	}
}

// Request sends req (its version already set) to node and calls done on the
// loop with the answer, or with an error: at most once, never inside this
// call.
func (c *Client) Request(node int32, req kmsg.Request, timeout time.Duration, done func(kmsg.Response, error)) {
	c.RequestInto(node, req, nil, timeout, done)
}

// RequestInto is Request with the answer decoded into resp, which the
// caller provides, new as req.ResponseKind makes it (see
// wire.DecodeResponseInto): a caller with one request out at a time keeps
// one answer and sets it back to new before each request, rather than
// having each answer allocated. A nil resp is Request's new answer.
func (c *Client) RequestInto(node int32, req kmsg.Request, resp kmsg.Response, timeout time.Duration, done func(kmsg.Response, error)) {
	fail := func(err error) {
		c.w.Clock.AfterFunc(0, func() { done(nil, err) })
	}
	if c.closed {
		fail(ErrClosed)
		return
	}
	addr, known := c.address[node]
	if !known {
		fail(fmt.Errorf("%w %d", ErrUnknownPeer, node))
		return
	}
	conn := c.conns[node]
	if conn == nil || conn.broken {
		if conn != nil && c.w.Clock.Elapsed() < conn.retryAt {
			fail(ErrBackoff)
			return
		}
		conn = c.dial(node, addr, conn)
	}
	conn.send(req, resp, timeout, done)
}

func (c *Client) dial(node int32, addr string, previous *connection) *connection {
	backoff := reconnectBackoffMin
	if previous != nil && !previous.answered {
		// The previous connection never got an answer through: back
		// off further before the one after this.
		backoff = min(previous.backoff*2, reconnectBackoffMax)
	}
	conn := &connection{client: c, node: node, backoff: backoff}
	conn.pending = conn.pendingInline[:0]
	conn.onTimeout = conn.timedOut
	conn.conn = c.w.Net.Dial(addr, conn)
	c.conns[node] = conn
	return conn
}

// Close fails everything pending and closes every connection.
func (c *Client) Close() {
	c.closed = true
	// In node order: failing a connection closes it and calls its
	// requests' callbacks, which a simulation traces.
	nodes := make([]int32, 0, len(c.conns))
	for node := range c.conns {
		nodes = append(nodes, node)
	}
	slices.Sort(nodes)
	for _, node := range nodes {
		c.conns[node].fail(ErrClosed)
		delete(c.conns, node)
	}
}

// connection is one peer connection and its pending requests, oldest
// first.
type connection struct {
	client *Client
	node   int32
	conn   core.Conn
	// pending holds the requests by value, in the queue's own array:
	// a request is in it from send to its answer or failure, and is
	// reached only through it, so it needs no allocation of its own.
	pending []pendingRequest
	// pendingInline is the queue's first array, in the connection's own
	// allocation: most connections have one request out at a time.
	pendingInline [1]pendingRequest
	next          int32
	broken        bool
	// answered is set once an answer arrived: the link worked.
	answered bool
	// backoff is the wait before the next dial if this one breaks, and
	// retryAt when that wait is over.
	backoff time.Duration
	retryAt time.Duration
	// onTimeout is timedOut, bound once: every request sets a timer.
	onTimeout func()
}

// pendingRequest is a request sent and not yet answered. It leaves the
// connection's queue before it is finished, so it is finished once.
type pendingRequest struct {
	correlation int32
	request     kmsg.Request
	// response, if not nil, is where the answer is decoded
	// (RequestInto).
	response kmsg.Response
	done     func(kmsg.Response, error)
	timer    core.Timer
	// deadline is when the timer fires (Elapsed).
	deadline time.Duration
}

func (c *connection) send(req kmsg.Request, resp kmsg.Response, timeout time.Duration, done func(kmsg.Response, error)) {
	if len(c.pending) >= pendingPerPeerMax {
		c.client.w.Clock.AfterFunc(0, func() { done(nil, ErrTooManyPending) })
		return
	}
	p := pendingRequest{correlation: c.next, request: req, response: resp, done: done}
	c.next++
	p.deadline = c.client.w.Clock.Elapsed() + timeout
	p.timer = c.client.w.Clock.AfterFunc(timeout, c.onTimeout)
	c.pending = append(c.pending, p)
	frame := c.client.encoder.Request(p.correlation, c.client.clientID, req)
	if !c.conn.Send(frame) {
		c.fail(ErrConnectionLost)
	}
}

// Frame implements core.Handler: an answer to the oldest pending request.
func (c *connection) Frame(frame []byte) {
	if c.broken || len(c.pending) == 0 {
		return
	}
	p := c.pending[0]
	correlation, ok := wire.PeekCorrelation(frame)
	if !ok || correlation != p.correlation {
		c.client.log.Warn("peer answered out of order", "node", c.node, "want", p.correlation, "got", correlation)
		c.fail(errBadResponse)
		return
	}
	resp := p.response
	var err error
	if resp != nil {
		_, err = wire.DecodeResponseInto(frame, p.request, resp)
	} else {
		_, resp, err = wire.DecodeResponse(frame, p.request)
	}
	if err != nil {
		c.client.log.Warn("undecodable answer from peer", "node", c.node, "api", kmsg.NameForKey(p.request.Key()), "error", err)
		c.fail(errBadResponse)
		return
	}
	// Shift the rest down rather than reslicing past the head, so the
	// queue keeps its array: with one request in flight, the usual case,
	// reslicing left no room and every request allocated a new one.
	rest := copy(c.pending, c.pending[1:])
	c.pending[rest] = pendingRequest{}
	c.pending = c.pending[:rest]
	c.answered = true
	p.finish(resp, nil)
}

// timedOut is a pending request's timer: a request that timed out leaves
// its answer in flight and the connection's order uncertain, so it starts
// over on a fresh one. (Every request's timer is stopped when it is
// finished, so a request past its deadline is the one that timed out;
// the connection's requests share this callback rather than each making
// its own.)
func (c *connection) timedOut() {
	if len(c.pending) > 0 {
		late := &c.pending[0]
		now := c.client.w.Clock.Elapsed()
		for i := range c.pending {
			if c.pending[i].deadline <= now {
				late = &c.pending[i]
				break
			}
		}
		c.client.log.Debug("peer request timed out", "node", c.node, "api", kmsg.NameForKey(late.request.Key()))
	}
	c.fail(ErrTimeout)
}

// Closed implements core.Handler.
func (c *connection) Closed(error) { c.fail(ErrConnectionLost) }

// fail breaks the connection and fails everything pending on it.
func (c *connection) fail(err error) {
	if c.broken {
		return
	}
	c.broken = true
	c.retryAt = c.client.w.Clock.Elapsed() + c.backoff
	c.conn.Close()
	pending := c.pending
	c.pending = nil
	for i := range pending {
		pending[i].finish(nil, err)
	}
}

func (p *pendingRequest) finish(resp kmsg.Response, err error) {
	p.timer.Stop()
	p.done(resp, err)
}
