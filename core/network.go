package core

// Network connects a node to listeners by address. Connections keep TCP's
// promise: frames arrive whole, in the order sent, without duplicates, until
// the connection breaks; after that nothing more arrives and Handler.Closed
// is called once. Nothing is promised across connections.
//
// A frame is one message: in Sluice, a Kafka request or response without its
// 4-byte size prefix (the real network adds and strips it).
type Network interface {
	// Dial opens a connection to addr. It returns at once; frames sent
	// before the connection is up are queued, and a refused or failed
	// connection is reported through h.Closed.
	Dial(addr string, h Handler) Conn
}

// Conn is one end of a connection.
type Conn interface {
	// Send queues frame for delivery and takes ownership of it. It never
	// blocks. A connection whose queue exceeds its bound, or that is
	// already broken, is closed instead and Send reports false.
	Send(frame []byte) bool

	// Close breaks the connection. Frames not yet delivered may be lost.
	// Closing does not call the local handler's Closed.
	Close()

	// RemoteAddr names the other end, for logs.
	RemoteAddr() string

	// PauseReceiving stops delivering frames to this end's handler until
	// ResumeReceiving; they wait, in order, in the network (and, in
	// production, in the kernel's socket buffer, so the sender feels
	// backpressure). A server uses it to bound the requests one client
	// has in flight, as Kafka mutes a channel.
	PauseReceiving()
	ResumeReceiving()
}

// Handler receives what arrives on a connection, on the loop.
type Handler interface {
	// Frame is called with each frame in order. The handler owns it.
	Frame(frame []byte)

	// Closed is called once when the connection breaks or the other end
	// closes it.
	Closed(err error)
}

// Acceptor is whatever serves a listening address: it receives each new
// inbound connection and returns the handler for its frames.
type Acceptor interface {
	Accept(c Conn) Handler
}
