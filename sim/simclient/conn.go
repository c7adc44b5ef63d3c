package simclient

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/wire"
	"sluice/sim/kernel"
)

// Conn is one connection from a client to a broker address. It opens with
// an ApiVersions exchange, holding other requests until the broker has said
// which versions it serves; then it writes requests as they come, each with
// the next correlation id, and matches each answer to the oldest request
// still waiting (Kafka answers a connection's requests in order, and the
// correlation id must agree).
//
// Every request completes exactly once: with its answer, or with an error
// from errors.go when it was refused, timed out, or the connection broke.
// A request that times out closes the connection, since the answers behind
// it cannot arrive before its own; one that times out before it was
// written (the connection still dialing) gives up alone.
type Conn struct {
	client  *Client
	address string
	network core.Conn // nil until dialed

	state connState
	// calls are the requests not yet answered, in the order they were
	// (or will be) written. Invariant: the written ones come first. They
	// start in callsInline: a connection seldom has more than a few
	// requests waiting, and growing the list was an allocation for
	// nearly every connection.
	calls           []*call
	callsInline     [4]*call
	correlationNext int32
	// served is, by API key, the highest version the broker serves, from
	// its ApiVersions answer, -1 where it serves none. Only the keys this
	// client sends are kept (see apiKeysPinnedMax): an array in the
	// struct, where a map cost every connection a handful of allocations.
	served [apiKeysPinnedMax]int16

	// dialEvent is the dial's event while it waits (its Stop cancels
	// it); the zero Handle once it ran or was stopped.
	dialEvent kernel.Handle
}

type connState uint8

const (
	connWaiting     connState = iota + 1 // backing off before the dial
	connHandshaking                      // dialed; ApiVersions in flight
	connReady                            // requests are written as they come
	connClosed
)

// call is one request and its completion.
type call struct {
	conn        *Conn
	correlation int32 // given when written
	request     kmsg.Request
	done        func(kmsg.Response, error)
	written     bool
	// counted is set for a request sent through the Client, whose
	// outcome the client counts in its stats (see countOutcome).
	counted bool
	// timeout is the call's timeout event; its Stop cancels it. A
	// kernel.Handle, not a cancel function, so a call costs one
	// allocation less, and the kernel reuses the event once done; its
	// action is the call (see Run), not a closure, for one more.
	timeout kernel.Handle
}

// Run is the call's timeout event: x is its kernel.Action.
func (x *call) Run() { x.conn.timedOut(x) }

// newConn starts a connection that dials after delay.
func newConn(c *Client, address string, delay int64) *Conn {
	conn := &Conn{client: c, address: address, state: connWaiting}
	conn.calls = conn.callsInline[:0]
	conn.dialEvent = c.kernel.ScheduleHandle(delay, c.process, "simclient.dial", kernel.Func(conn.dial))
	return conn
}

// Address is the broker address this connection goes to.
func (conn *Conn) Address() string { return conn.address }

func (conn *Conn) dial() {
	conn.dialEvent = kernel.Handle{}
	conn.state = connHandshaking
	conn.network = conn.client.endpoint.Dial(conn.address, conn)
	req := kmsg.NewPtrApiVersionsRequest()
	req.ClientSoftwareName = "sluice-simclient"
	req.ClientSoftwareVersion = "1.0.0"
	req.SetVersion(pinnedVersions[req.Key()])
	handshake := conn.enqueue(req, conn.client.config.RequestTimeout, conn.handshakeAnswered)
	// It goes first: requests queued while waiting to dial are written
	// after it, once it is answered. (Moved to the front in place.)
	copy(conn.calls[1:], conn.calls[:len(conn.calls)-1])
	conn.calls[0] = handshake
	conn.write(handshake)
}

// handshakeAnswered reads the broker's ApiVersions answer and releases the
// requests that waited for it.
func (conn *Conn) handshakeAnswered(resp kmsg.Response, err error) {
	if err != nil {
		return // the connection is already closed and its calls failed
	}
	answer := resp.(*kmsg.ApiVersionsResponse)
	if answer.ErrorCode != 0 {
		conn.fail(fmt.Errorf("%w: ApiVersions answered %v", ErrProtocol, kerr.ErrorForCode(answer.ErrorCode)))
		return
	}
	for key := range conn.served {
		conn.served[key] = -1
	}
	for _, key := range answer.ApiKeys {
		if key.ApiKey >= 0 && key.ApiKey < apiKeysPinnedMax {
			conn.served[key.ApiKey] = key.MaxVersion
		}
	}
	conn.state = connReady
	conn.client.connectionWorked(conn)
	// Write what the broker serves, in order; then refuse the rest (last,
	// since a refused caller may send again on this connection). The
	// calls kept are filtered in place.
	var refused []*call
	kept := conn.calls[:0]
	for _, x := range conn.calls {
		if conn.serves(x.request) {
			kept = append(kept, x)
		} else {
			refused = append(refused, x)
		}
	}
	clear(conn.calls[len(kept):])
	conn.calls = kept
	for _, x := range kept {
		conn.write(x)
	}
	for _, x := range refused {
		x.timeout.Stop()
		conn.complete(x, nil, ErrUnsupportedVersion)
	}
}

// serves reports whether the broker serves req at the version it carries.
func (conn *Conn) serves(req kmsg.Request) bool {
	key := req.Key()
	if key < 0 || key >= apiKeysPinnedMax {
		return false
	}
	highest := conn.served[key]
	return highest >= 0 && req.GetVersion() <= highest
}

// Send queues req, at this client's pinned version, and calls done with the
// answer or an error, always from a later event.
func (conn *Conn) Send(req kmsg.Request, done func(kmsg.Response, error)) {
	conn.SendWithTimeout(req, conn.client.config.RequestTimeout, done)
}

// SendWithTimeout is Send with a request timeout of its own, for requests
// the broker may rightly hold longer than request.timeout.ms: a JoinGroup
// parks until the rebalance completes, so Kafka's consumer waits for it up
// to the rebalance timeout plus a margin.
func (conn *Conn) SendWithTimeout(req kmsg.Request, timeout time.Duration, done func(kmsg.Response, error)) {
	conn.send(req, timeout, false, done)
}

// send is SendWithTimeout; counted says whether the client counts the
// outcome in its stats (a request sent through the Client).
func (conn *Conn) send(req kmsg.Request, timeout time.Duration, counted bool, done func(kmsg.Response, error)) {
	if timeout <= 0 {
		panic(fmt.Sprintf("simclient: %s request with timeout %v", kmsg.NameForKey(req.Key()), timeout))
	}
	version, pinned := pinnedVersion(req)
	switch {
	case !pinned:
		conn.refuse(counted, done, fmt.Errorf("%w: no pinned version for %s", ErrUnsupportedVersion, kmsg.NameForKey(req.Key())))
		return
	case conn.state == connClosed:
		conn.refuse(counted, done, ErrNotDelivered)
		return
	case len(conn.calls) >= pendingRequestsMax:
		conn.refuse(counted, done, ErrTooManyPending)
		return
	}
	req.SetVersion(version)
	if conn.state == connReady && !conn.serves(req) {
		conn.refuse(counted, done, ErrUnsupportedVersion)
		return
	}
	x := conn.enqueue(req, timeout, done)
	x.counted = counted
	if conn.state == connReady {
		conn.write(x)
	}
}

// refuse fails a request that was never queued, from a later event.
func (conn *Conn) refuse(counted bool, done func(kmsg.Response, error), err error) {
	conn.client.later(func() {
		if counted {
			conn.client.countOutcome(err)
		}
		done(nil, err)
	})
}

// enqueue adds a call and starts its timeout.
func (conn *Conn) enqueue(req kmsg.Request, timeout time.Duration, done func(kmsg.Response, error)) *call {
	x := conn.client.newCall()
	x.conn, x.request, x.done = conn, req, done
	x.timeout = conn.client.kernel.ScheduleHandle(int64(timeout), conn.client.process, "simclient.request-timeout", x)
	conn.calls = append(conn.calls, x)
	return x
}

func (conn *Conn) write(x *call) {
	if x.written {
		panic(fmt.Sprintf("simclient: request %d to %s written twice", x.correlation, conn.address))
	}
	if i := slices.Index(conn.calls, x); i < 0 || (i > 0 && !conn.calls[i-1].written) {
		panic(fmt.Sprintf("simclient: %s request to %s written out of order", kmsg.NameForKey(x.request.Key()), conn.address))
	}
	x.written = true
	// Ids are given in the order requests go out, as Kafka clients do.
	x.correlation = conn.correlationNext
	conn.correlationNext++
	if conn.correlationNext < 0 {
		conn.correlationNext = 0 // wrapped; ids only need to differ from recent ones
	}
	// A fresh buffer per request: the network keeps the frame until it
	// is delivered.
	frame := wire.AppendRequest(nil, x.correlation, conn.client.config.ClientID, x.request)
	if !conn.network.Send(frame) {
		// The connection is broken; its Closed may never come (a
		// send-queue overflow closes without telling this end). Fail
		// from a later event: write runs inside Send, whose caller must
		// not see its callback yet.
		conn.client.later(func() { conn.fail(ErrConnectionLost) })
	}
}

// Frame implements core.Handler: the answer to the oldest written request.
func (conn *Conn) Frame(frame []byte) {
	if conn.state == connClosed {
		return
	}
	correlation, ok := wire.PeekCorrelation(frame)
	if !ok || len(conn.calls) == 0 || !conn.calls[0].written || conn.calls[0].correlation != correlation {
		conn.fail(fmt.Errorf("%w: answer with correlation id %d does not match the oldest request", ErrProtocol, correlation))
		return
	}
	x := conn.calls[0]
	_, resp, err := wire.DecodeResponse(frame, x.request)
	if err != nil {
		conn.fail(fmt.Errorf("%w: %s answer does not decode: %v", ErrProtocol, kmsg.NameForKey(x.request.Key()), err))
		return
	}
	// Shift the rest down rather than reslicing past the head, so the
	// queue keeps its array: with one request in flight, the usual case,
	// reslicing left no room and every request allocated a new one.
	rest := copy(conn.calls, conn.calls[1:])
	conn.calls[rest] = nil
	conn.calls = conn.calls[:rest]
	x.timeout.Stop()
	conn.complete(x, resp, nil)
}

// Closed implements core.Handler: the connection broke or the broker
// closed it.
func (conn *Conn) Closed(err error) {
	if conn.state == connClosed {
		return
	}
	if err == nil {
		err = ErrConnectionLost
	}
	conn.fail(err)
}

func (conn *Conn) timedOut(x *call) {
	if conn.state == connClosed {
		return
	}
	if !x.written {
		// It never left: the connection is still backing off before
		// its dial, or waiting for the handshake. Only this request
		// gives up; failing the connection would push its dial back
		// again, and with a reconnect backoff longer than the request
		// timeout no request would ever be written.
		conn.calls = slices.DeleteFunc(conn.calls, func(other *call) bool { return other == x })
		conn.client.note(fmt.Sprintf("%s request to %s timed out before it was written", kmsg.NameForKey(x.request.Key()), conn.address))
		conn.complete(x, nil, fmt.Errorf("%w: %w", ErrNotDelivered, ErrRequestTimeout))
		return
	}
	conn.client.note(fmt.Sprintf("%s request %d to %s timed out", kmsg.NameForKey(x.request.Key()), x.correlation, conn.address))
	conn.fail(ErrRequestTimeout)
}

// fail closes the connection and completes every call: those written with
// an unknown outcome (unless the connection never came up, so nothing was
// delivered), the others as not delivered.
func (conn *Conn) fail(cause error) {
	if conn.state == connClosed {
		return
	}
	conn.shut()
	conn.client.connectionClosed(conn, cause)
	calls := conn.calls
	conn.calls = nil
	for _, x := range calls {
		x.timeout.Stop()
		switch {
		case !x.written || neverConnected(cause):
			conn.complete(x, nil, fmt.Errorf("%w: %w", ErrNotDelivered, cause))
		case cause == ErrRequestTimeout || cause == ErrConnectionLost:
			conn.complete(x, nil, cause)
		default:
			conn.complete(x, nil, fmt.Errorf("%w: %w", ErrConnectionLost, cause))
		}
	}
}

// shut closes the network side without completing anything.
func (conn *Conn) shut() {
	conn.state = connClosed
	conn.dialEvent.Stop()
	conn.dialEvent = kernel.Handle{}
	if conn.network != nil {
		conn.network.Close()
	}
}

// abandon drops the connection and its calls without a word: the client
// process died, and nothing it was waiting for matters any more.
func (conn *Conn) abandon() {
	conn.shut()
	conn.calls = nil
}

func (conn *Conn) complete(x *call, resp kmsg.Response, err error) {
	if x.counted {
		conn.client.countOutcome(err)
	}
	done := x.done
	// The call is finished: let go of what it holds, as its block of
	// calls (see newCall) may outlive it.
	x.conn, x.request, x.done, x.timeout = nil, nil, nil, kernel.Handle{}
	done(resp, err)
}
