package broker

import (
	"errors"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/wire"
)

// inFlightMax bounds the requests one connection may have between arrival
// and answer. At the bound the broker stops reading from the connection, as
// Kafka mutes a channel, so a client that pipelines without limit (librdkafka
// allows a million) gets backpressure rather than an error.
const inFlightMax = 64

// client is one client connection: it decodes request frames, hands them to
// their handlers, and sends the answers back in request order, since Kafka
// clients match responses to requests by order as much as by correlation id.
type client struct {
	broker *Broker
	conn   core.Conn
	// decoder decodes the frames that arrive unprepared (Frame), on the
	// loop, in order; it lets them share their client id.
	decoder wire.RequestDecoder

	// exchanges holds the requests not yet answered on the wire, oldest
	// first. Only the head may be written; later ones wait even when
	// their answer is ready.
	exchanges []*exchange
	// exchangesInline is the queue's first array, in the client's own
	// allocation: a client with one request in flight at a time, as
	// most are, never needs another.
	exchangesInline [1]*exchange
	paused          bool
	closed          bool
	// controllerListener is set for connections to the controller
	// listener, where other nodes send the node-to-node APIs.
	controllerListener bool
	// spareFetch is the exchange of a Fetch this connection answered
	// last, kept for its next Fetch (see fetchExchange); nil if none.
	spareFetch *exchange
}

// exchange is one request and, once known, its answer.
type exchange struct {
	client  *client
	request *wire.Request
	// batchChecks are a produce's batch checks, made when the request
	// was prepared (prepare.go).
	batchChecks [][]producedCheck
	// frame is the encoded answer; nil until answered.
	frame []byte
	// answered is set once the handler has answered or declared there
	// is nothing to answer (acks=0).
	answered bool
	silent   bool
	// hangUp, set with silent, closes the connection once the answers
	// before this exchange are written: a failed produce with acks=0,
	// whose client expects no answer, learns of the failure so
	// (respondToAcksZero).
	hangUp error

	// decoded holds the request when the loop decodes it (Frame), in the
	// exchange's own allocation rather than one more per request.
	decoded wire.Request
	// fetchBody, for a Fetch the loop decoded, is room for its body
	// (fetchExchange); fetch, for one on the client listener, room for
	// the pendingFetch that serves it (partitionFetchExchange). Both nil
	// otherwise.
	fetchBody *kmsg.FetchRequest
	fetch     *pendingFetch
	// produce, for a Produce on the client listener the loop decoded, is
	// room for what handling it needs (produceExchange); nil otherwise.
	produce *produceRoom
}

// Fetch is over half of the requests a broker serves, and a connection
// that fetches (a follower's, a consumer's) sends one fetch after
// another. One the loop decodes gets an exchange with room for its body,
// and on the client listener, where partitions are fetched, for the
// pendingFetch that serves it (on the controller listener, Fetch is the
// quorum's, which needs no pendingFetch). Once its answer is written, the
// connection keeps the exchange for its next Fetch (spareFetch): the next
// request is decoded into the same exchange (its body set back to new),
// and its answer built in the arrays of the last answer, so that a
// connection fetching one fetch at a time allocates only what kmsg's
// decoding does.
//
// An exchange is written once its handler has answered it, and handlers
// are done with a request and its answer when they answer (the answer is
// encoded at once; fetchWaiters and the quorum let go of a fetch before
// answering it), so nothing holds an exchange that is kept. It is reused
// only when the next Fetch arrives, on a later turn of the loop.
type (
	fetchExchange struct {
		exchange
		body kmsg.FetchRequest
	}
	partitionFetchExchange struct {
		fetchExchange
		fetch pendingFetch
	}
)

// Produce is the other request clients send most: one the loop decodes on
// the client listener gets an exchange with room for its body and for
// what handling it needs (produceRoom), in one allocation rather than a
// dozen.
type produceExchange struct {
	exchange
	body kmsg.ProduceRequest
	room produceRoom
}

// bodyExchange is an exchange with room for its request's body, for the
// requests clients and nodes send all the time (heartbeats, commits,
// votes): decoding one then allocates no body apart from its exchange.
type bodyExchange[T any] struct {
	exchange
	body T
}

// withBody makes an exchange with room for a body of type T, new as
// kmsg.RequestForKey makes it, for the frame to be decoded into.
func withBody[T any, P interface {
	*T
	kmsg.Request
	Default()
}]() *exchange {
	bx := &bodyExchange[T]{}
	body := P(&bx.body)
	body.Default()
	bx.decoded.Body = body
	return &bx.exchange
}

// newExchange makes the exchange for a request frame about to be decoded
// on the loop.
func (c *client) newExchange(frame []byte) *exchange {
	key, ok := wire.PeekKey(frame)
	if ok && key == produceKey && !c.controllerListener {
		px := &produceExchange{}
		px.body = kmsg.NewProduceRequest() // as wire would make it
		px.decoded.Body = &px.body
		px.exchange.produce = &px.room
		return &px.exchange
	}
	if !ok {
		return &exchange{}
	}
	switch kmsg.Key(key) {
	case kmsg.Fetch:
		return c.newFetchExchange()
	case kmsg.ListOffsets:
		return withBody[kmsg.ListOffsetsRequest]()
	case kmsg.Metadata:
		return withBody[kmsg.MetadataRequest]()
	case kmsg.OffsetCommit:
		return withBody[kmsg.OffsetCommitRequest]()
	case kmsg.OffsetFetch:
		return withBody[kmsg.OffsetFetchRequest]()
	case kmsg.FindCoordinator:
		return withBody[kmsg.FindCoordinatorRequest]()
	case kmsg.JoinGroup:
		return withBody[kmsg.JoinGroupRequest]()
	case kmsg.Heartbeat:
		return withBody[kmsg.HeartbeatRequest]()
	case kmsg.SyncGroup:
		return withBody[kmsg.SyncGroupRequest]()
	case kmsg.ApiVersions:
		return withBody[kmsg.ApiVersionsRequest]()
	case kmsg.Vote:
		return withBody[kmsg.VoteRequest]()
	case kmsg.BeginQuorumEpoch:
		return withBody[kmsg.BeginQuorumEpochRequest]()
	case kmsg.AlterPartition:
		return withBody[kmsg.AlterPartitionRequest]()
	case kmsg.BrokerRegistration:
		return withBody[kmsg.BrokerRegistrationRequest]()
	case kmsg.BrokerHeartbeat:
		return withBody[kmsg.BrokerHeartbeatRequest]()
	default:
		return &exchange{}
	}
}

// newFetchExchange makes the exchange for a Fetch: the connection's spare,
// if it has one, or a new one.
func (c *client) newFetchExchange() *exchange {
	if x := c.spareFetch; x != nil {
		c.spareFetch = nil
		body, f := x.fetchBody, x.fetch
		*x = exchange{fetchBody: body, fetch: f}
		*body = kmsg.NewFetchRequest() // new again, as wire would make it
		x.decoded.Body = body
		if f != nil {
			f.reset()
		}
		return x
	}
	var fx *fetchExchange
	if c.controllerListener {
		fx = &fetchExchange{}
	} else {
		px := &partitionFetchExchange{}
		px.exchange.fetch = &px.fetch
		px.fetch.reset()
		fx = &px.fetchExchange
	}
	fx.body = kmsg.NewFetchRequest() // as wire would make it
	fx.fetchBody = &fx.body
	fx.decoded.Body = &fx.body
	return &fx.exchange
}

// Accept implements core.Acceptor: the broker serves every connection made
// to its client listener.
func (b *Broker) Accept(c core.Conn) core.Handler { return b.accept(c) }

func (b *Broker) accept(c core.Conn) *client {
	cl := &client{broker: b, conn: c, decoder: wire.NewRequestDecoder(&b.clientIDs)}
	cl.exchanges = cl.exchangesInline[:0]
	if b.stopped {
		// Stopping: whoever connects now finds the door shut.
		c.Close()
		cl.closed = true
		return cl
	}
	b.clientsAccepted++
	b.clients[cl] = b.clientsAccepted
	return cl
}

// Frame implements core.Handler: one request arrived, unprepared (always
// in the simulator; in production on the controller listener). It is
// prepared here, on the loop, as the network would have done off it.
func (c *client) Frame(frame []byte) {
	if c.closed {
		return
	}
	x := c.newExchange(frame)
	c.serve(x, prepareRequest(&c.decoder, &x.decoded, frame, x.produce))
}

// PreparedFrame takes a request the network prepared on the connection's
// goroutine (net.PreparedHandler): decoded, its batches checked.
func (c *client) PreparedFrame(_ []byte, prepared any) {
	if c.closed {
		return
	}
	c.serve(&exchange{}, *prepared.(*preparedRequest))
}

// serve queues a prepared request's exchange, x (new), and hands it to its
// handler.
func (c *client) serve(x *exchange, p preparedRequest) {
	if p.err != nil {
		c.rejectUndecodable(p.request, p.err)
		return
	}
	x.client, x.request, x.batchChecks = c, p.request, p.batchChecks
	c.exchanges = append(c.exchanges, x)
	if len(c.exchanges) >= inFlightMax && !c.paused {
		c.paused = true
		c.conn.PauseReceiving()
	}
	c.broker.dispatch(x)
}

// rejectUndecodable answers what can be answered and closes the rest: an
// ApiVersions request of a version this build does not know gets the v0
// answer KIP-511 asks for (UNSUPPORTED_VERSION and the full list), so the
// client can retry with a version both sides speak; anything else that does
// not decode closes the connection, as Kafka does.
func (c *client) rejectUndecodable(req *wire.Request, err error) {
	if req != nil && req.Header.Key == apiVersionsKey && errors.Is(err, wire.ErrVersionTooHigh) {
		x := &exchange{client: c, request: req}
		c.exchanges = append(c.exchanges, x)
		x.respondAPIVersionsUnsupported()
		return
	}
	c.logger().Warn("closing connection: undecodable request", "error", err)
	c.close()
}

// logger is the connection's logger. It is made when a warning needs it,
// which is rare, rather than for every connection, which cost more than
// the warnings ever did.
func (c *client) logger() *slog.Logger {
	return c.broker.log.With("client", c.conn.RemoteAddr())
}

// Closed implements core.Handler: the connection broke or the client left.
func (c *client) Closed(err error) {
	if c.closed {
		return
	}
	c.closed = true
	c.exchanges = nil
	c.spareFetch = nil
	delete(c.broker.clients, c)
}

// close drops the connection from the broker's side.
func (c *client) close() {
	if c.closed {
		return
	}
	c.conn.Close()
	c.Closed(nil)
}

// respond answers the request. A handler calls it exactly once, now or
// from a later event (a produce waiting for its sync, a fetch long-poll).
func (x *exchange) respond(resp kmsg.Response) {
	if x.answered {
		panic("broker: request answered twice: " + kmsg.NameForKey(x.request.Header.Key))
	}
	if produce, ok := resp.(*kmsg.ProduceResponse); ok && x.request.Body.(*kmsg.ProduceRequest).Acks == 0 {
		x.respondToAcksZero(produce)
		return
	}
	resp.SetVersion(x.request.Header.Version)
	x.frame = x.client.broker.encoder.Response(x.request.Header, resp)
	x.answered = true
	x.client.flush()
}

// Respond is respond, for the handlers of other packages
// (wire.Responder).
func (x *exchange) Respond(resp kmsg.Response) { x.respond(resp) }

// respondAPIVersionsUnsupported answers an ApiVersions request of a
// version this broker does not serve with the v0 answer KIP-511 defines:
// UNSUPPORTED_VERSION and the full list, so the client can retry at a
// version both sides speak.
func (x *exchange) respondAPIVersionsUnsupported() {
	if x.answered {
		panic("broker: request answered twice: ApiVersions")
	}
	resp := apiVersionsUnsupported()
	x.frame = x.client.broker.encoder.Response(wire.Header{Key: apiVersionsKey, Version: 0, Correlation: x.request.Header.Correlation}, resp)
	x.answered = true
	x.client.flush()
}

// respondNothing completes a request that has no answer (Produce with
// acks=0): it still frees its place in the connection's order.
func (x *exchange) respondNothing() {
	if x.answered {
		panic("broker: request answered twice: " + kmsg.NameForKey(x.request.Header.Key))
	}
	x.answered, x.silent = true, true
	x.client.flush()
}

// respondByHangingUp completes a request that has no answer by closing
// the connection, for reason, once the answers before it are written.
func (x *exchange) respondByHangingUp(reason error) {
	x.hangUp = reason
	x.respondNothing()
}

// flush writes every answered exchange at the head of the queue.
func (c *client) flush() {
	if c.closed {
		return
	}
	sent := 0
	for _, x := range c.exchanges {
		if !x.answered {
			break
		}
		sent++
		if !x.silent && !c.conn.Send(x.frame) {
			// The connection broke or its send queue overflowed;
			// the network reports Closed, but there is nothing
			// more to do for this client either way.
			c.close()
			return
		}
		if x.hangUp != nil {
			c.logger().Info("closing connection", "api", kmsg.NameForKey(x.request.Header.Key),
				"correlation", x.request.Header.Correlation, "reason", x.hangUp)
			c.close()
			return
		}
	}
	if sent == 0 {
		return
	}
	for _, x := range c.exchanges[:sent] {
		if x.fetchBody != nil {
			c.spareFetch = x // written: done with (see fetchExchange)
		}
	}
	// Move the rest to the front rather than reslicing past the sent
	// ones: the queue then keeps its array, and the next request does
	// not allocate a new one (with one request in flight at a time, the
	// usual case, reslicing left no room and every request paid for one).
	rest := copy(c.exchanges, c.exchanges[sent:])
	clear(c.exchanges[rest:])
	c.exchanges = c.exchanges[:rest]
	if c.paused && len(c.exchanges) < inFlightMax/2 {
		c.paused = false
		c.conn.ResumeReceiving()
	}
}

// gone reports whether the client went away, so a handler finishing late
// can skip work nobody will read.
func (x *exchange) gone() bool { return x.client.closed }
