package net

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	stdnet "net"
	"sync"
	"sync/atomic"
	"time"

	"sluice/core"
)

// connection is one TCP connection, accepted or dialed: the core.Conn its
// owner holds on the loop, plus the state its reader and writer goroutines
// share with the loop.
type connection struct {
	// Fixed at creation, read by every goroutine.
	post       func(func()) bool
	limits     Limits
	log        *slog.Logger // carries the remote address
	registry   *registry
	remoteAddr string
	born       time.Time // with Go's monotonic reading, for idle accounting

	// The fields below belong to the loop: the Conn methods and the
	// functions the reader posts (delivery.go) touch them, nothing else.

	// handler receives frames and Closed. A dialed connection has it from
	// the start; an accepted one gets it from the Acceptor.
	handler core.Handler
	// preparer, when the listener's acceptor is one, prepares each
	// frame on the reader goroutine (prepare.go). Set before the reader
	// starts and never changed.
	preparer FramePreparer

	// closedByOwner is set by Close (or when the Acceptor was never
	// called): from then on no callback runs.
	closedByOwner bool

	// closedReported is set when Closed has run; nothing runs after it.
	closedReported bool

	// receivingPaused mirrors PauseReceiving/ResumeReceiving on the loop.
	// Frames the reader posted around a pause wait in held, in order, and
	// a peer's clean close (io.EOF) waits behind them in heldEnd.
	receivingPaused     bool
	held                []arrivedFrame
	heldEnd             error
	heldDeliveryPending bool // deliverHeld is posted and has not run yet

	// The fields below are shared by the loop, the reader and the writer,
	// and guarded by mutex.
	mutex sync.Mutex
	// writerWake wakes the writer when a frame is queued or the connection
	// is closing or ends; readerWake wakes a paused reader when receiving
	// resumes or the connection is closing or ends.
	writerWake sync.Cond
	readerWake sync.Cond
	// socket is nil until a dial completes.
	socket stdnet.Conn
	// queue holds the frames Send took and the writer has not taken yet.
	queue [][]byte
	// queuedBytes counts, size prefixes included, what Send took and the
	// writer has not finished writing (queue plus the batch in flight).
	// Invariant: 0 <= queuedBytes <= limits.SendQueueBytesMax.
	queuedBytes int
	// closing: the owner closed; write what is queued, then end.
	closing bool
	// ended: the connection is over and reason says why. Set once.
	ended  bool
	reason error
	// readerPaused tells the reader to stop reading; readerParked says it
	// has (for tests and diagnostics).
	readerPaused bool
	readerParked bool

	// closingFlag mirrors closing for the reader's per-frame check.
	closingFlag atomic.Bool
	// lastActivity is when a byte was last read or written, as
	// nanoseconds since born. Used only with an IdleTimeout.
	lastActivity atomic.Int64
}

var _ core.Conn = (*connection)(nil)

func newConnection(post func(func()) bool, limits Limits, log *slog.Logger, registry *registry, remoteAddr string) *connection {
	c := &connection{
		post:       post,
		limits:     limits,
		log:        log.With("remote", remoteAddr),
		registry:   registry,
		remoteAddr: remoteAddr,
		born:       time.Now(),
	}
	c.writerWake.L = &c.mutex
	c.readerWake.L = &c.mutex
	return c
}

// Send implements core.Conn. It queues frame for the writer and never
// blocks; a frame that would pass SendQueueBytesMax closes the connection.
func (c *connection) Send(frame []byte) bool {
	if c.closedByOwner {
		return false
	}
	frameBytes := frameHeaderBytes + len(frame)
	c.mutex.Lock()
	if c.ended || c.closing {
		c.mutex.Unlock()
		return false
	}
	if c.queuedBytes+frameBytes > c.limits.SendQueueBytesMax {
		queued := c.queuedBytes
		c.mutex.Unlock()
		c.end(fmt.Errorf("%w: %d bytes queued, a frame of %d more, the limit is %d",
			ErrSendQueueFull, queued, frameBytes, c.limits.SendQueueBytesMax))
		return false
	}
	c.queue = append(c.queue, frame)
	c.queuedBytes += frameBytes
	if len(c.queue) == 1 {
		c.writerWake.Signal()
	}
	c.mutex.Unlock()
	return true
}

// Close implements core.Conn. No callback runs after it. What Send queued
// before it is still written, for up to closeLingerMax, so a last response
// reaches the peer; then the socket closes and the peer reads io.EOF.
func (c *connection) Close() {
	if c.closedByOwner {
		return
	}
	c.closedByOwner = true
	c.held = nil
	c.heldEnd = nil
	c.mutex.Lock()
	if c.ended {
		c.mutex.Unlock()
		return
	}
	if c.queuedBytes == 0 {
		c.mutex.Unlock()
		c.end(errClosedByOwner)
		return
	}
	c.closing = true
	c.closingFlag.Store(true)
	if c.socket != nil {
		c.startLinger(c.socket)
	}
	c.writerWake.Signal()
	c.readerWake.Broadcast()
	c.mutex.Unlock()
}

// startLinger bounds the writes of a closing connection, including one
// blocked right now on a peer that does not read.
func (c *connection) startLinger(socket stdnet.Conn) {
	// An error here means the socket is already closed: the write it
	// would bound fails anyway.
	_ = socket.SetWriteDeadline(time.Now().Add(closeLingerMax))
}

// RemoteAddr implements core.Conn: the peer's address for an accepted
// connection, the dialed address for a dialed one.
func (c *connection) RemoteAddr() string { return c.remoteAddr }

// PauseReceiving implements core.Conn. The reader stops reading once the
// frame it may be reading is posted; the loop holds whatever arrives until
// ResumeReceiving, so the handler sees nothing in between.
func (c *connection) PauseReceiving() {
	if c.receivingPaused {
		return
	}
	c.receivingPaused = true
	c.mutex.Lock()
	c.readerPaused = true
	c.mutex.Unlock()
}

// ResumeReceiving implements core.Conn. Frames held while paused are
// delivered on a later turn of the loop, never inside this call.
func (c *connection) ResumeReceiving() {
	if !c.receivingPaused {
		return
	}
	c.receivingPaused = false
	c.mutex.Lock()
	c.readerPaused = false
	c.readerWake.Broadcast()
	c.mutex.Unlock()
	c.scheduleHeldDelivery()
}

// end finishes the connection for reason, unless it has already ended, and
// returns the reason it ended for (the first one). It closes the socket,
// which wakes a reader or writer blocked in a syscall, and wakes one waiting
// on the mutex. Any goroutine may call it.
// isEnded reports whether the connection has ended, for a reader waiting
// on the queued-bytes budget.
func (c *connection) isEnded() bool {
	c.mutex.Lock()
	defer c.mutex.Unlock()
	return c.ended
}

func (c *connection) end(reason error) error {
	if reason == nil {
		panic("net: a connection ended without a reason")
	}
	c.mutex.Lock()
	if c.ended {
		first := c.reason
		c.mutex.Unlock()
		return first
	}
	c.ended = true
	c.reason = reason
	socket := c.socket
	clear(c.queue) // the frames are lost either way; let them go
	c.queue = nil
	c.writerWake.Broadcast()
	c.readerWake.Broadcast()
	c.mutex.Unlock()
	c.registry.queued.interrupt() // a reader waiting for queued bytes stops
	if socket != nil {
		// The error of closing a socket being abandoned tells nothing.
		_ = socket.Close()
	}
	return reason
}

// install gives a dialed connection its socket, unless it ended while the
// dial was in progress.
func (c *connection) install(socket stdnet.Conn) bool {
	c.mutex.Lock()
	defer c.mutex.Unlock()
	if c.ended {
		return false
	}
	if c.socket != nil {
		panic("net: a connection got a second socket")
	}
	c.socket = socket
	if c.closing {
		c.startLinger(socket)
	}
	return true
}

// finish is the last thing a connection's goroutines do: free its place in
// the registry, log why it ended, and tell the handler unless its owner
// closed it or the loop is gone. Only the reader (or a dial that failed)
// calls it, after posting its last frame, so Closed comes after every frame.
func (c *connection) finish(reason error) {
	c.registry.remove(c)
	c.logEnd(reason)
	if reason == errClosedByOwner || reason == errLoopStopped {
		return
	}
	c.post(func() { c.endArrived(reason) })
}

// logEnd logs why the connection ended: the limits at Warn, since someone
// may need to raise one or find a misbehaving client; the rest at Debug.
func (c *connection) logEnd(reason error) {
	level := slog.LevelDebug
	if isLimitReason(reason) {
		level = slog.LevelWarn
	}
	c.log.Log(context.Background(), level, "net: connection closed", "reason", reason)
}

func isLimitReason(reason error) bool {
	for _, limit := range []error{ErrFrameTooLarge, ErrSendQueueFull, ErrIdleTimeout, ErrTooManyConnections} {
		if errors.Is(reason, limit) {
			return true
		}
	}
	return false
}

// setNoDelay turns Nagle's algorithm off: a request or response is written
// whole in one writev, and waiting to coalesce it with the next would only
// add latency. Go already does this for TCP; it is said here on purpose.
func setNoDelay(socket stdnet.Conn) {
	if tcp, ok := socket.(*stdnet.TCPConn); ok {
		// Fails only on a closed socket, which the reader will notice.
		_ = tcp.SetNoDelay(true)
	}
}
