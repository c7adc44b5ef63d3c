package net

import (
	"fmt"
	"math"
	"time"
)

// Limits are the bounds a deployment may set on a listener or dialer.
type Limits struct {
	// FrameBytesMax is the largest frame a peer may send (Kafka's
	// socket.request.max.bytes, default 100 MiB). A size prefix beyond it
	// closes the connection, with a logged reason, before anything of that
	// size is allocated.
	FrameBytesMax int

	// SendQueueBytesMax bounds, per connection, the bytes queued by Send and
	// not yet written to the kernel, size prefixes included. A Send that
	// would pass it closes the connection (the peer is not reading, or the
	// node produces faster than the link carries), as core.Conn promises.
	// Kafka has no direct equivalent: its broker mutes a channel instead.
	SendQueueBytesMax int

	// ConnectionsMax bounds the live connections of one listener or dialer
	// (Kafka's max.connections). A connection accepted beyond it is closed
	// at once and logged; a Dial beyond it reports ErrTooManyConnections.
	ConnectionsMax int

	// QueuedBytesMax bounds the bytes of frames read from the sockets of
	// one listener or dialer and not yet taken by the node's loop (Kafka's
	// queued.max.request.bytes). It must be at least FrameBytesMax, or a
	// largest frame could never be read.
	QueuedBytesMax int64

	// IdleTimeout closes a connection that has neither read nor written a
	// byte for that long (Kafka's connections.max.idle.ms, default 10
	// minutes). Zero means never. A connection whose receiving is paused is
	// not idle: the node is holding it on purpose.
	IdleTimeout time.Duration
}

// The defaults, with Kafka's where it has one.
const (
	frameBytesMaxDefault     = 100 << 20 // socket.request.max.bytes
	sendQueueBytesMaxDefault = 64 << 20  // as sim/simnet's directionQueueBytesMax
	connectionsMaxDefault    = 1 << 14   // Kafka's is unbounded; file descriptors are not
	idleTimeoutDefault       = 10 * time.Minute
	queuedBytesMaxDefault    = 512 << 20 // Kafka's is unbounded
)

// DefaultLimits returns the limits a broker uses unless configured otherwise.
func DefaultLimits() Limits {
	return Limits{
		FrameBytesMax:     frameBytesMaxDefault,
		SendQueueBytesMax: sendQueueBytesMaxDefault,
		ConnectionsMax:    connectionsMaxDefault,
		IdleTimeout:       idleTimeoutDefault,
		QueuedBytesMax:    queuedBytesMaxDefault,
	}
}

// Validate reports the first limit that is out of range.
func (l Limits) Validate() error {
	// A frame's size prefix is a signed 32-bit integer in Kafka.
	if l.FrameBytesMax < 0 || l.FrameBytesMax > math.MaxInt32 {
		return fmt.Errorf("net: FrameBytesMax %d is outside [0, %d]", l.FrameBytesMax, math.MaxInt32)
	}
	// Bounding the queue by MaxInt32 also bounds every frame Send accepts,
	// so each one fits its size prefix.
	if l.SendQueueBytesMax < frameHeaderBytes || l.SendQueueBytesMax > math.MaxInt32 {
		return fmt.Errorf("net: SendQueueBytesMax %d is outside [%d, %d]", l.SendQueueBytesMax, frameHeaderBytes, math.MaxInt32)
	}
	if l.ConnectionsMax < 1 {
		return fmt.Errorf("net: ConnectionsMax %d is below 1", l.ConnectionsMax)
	}
	if l.QueuedBytesMax < int64(l.FrameBytesMax) {
		return fmt.Errorf("net: QueuedBytesMax %d is below FrameBytesMax %d", l.QueuedBytesMax, l.FrameBytesMax)
	}
	if l.IdleTimeout < 0 {
		return fmt.Errorf("net: IdleTimeout %v is negative", l.IdleTimeout)
	}
	return nil
}

// The package's fixed bounds.
const (
	// frameHeaderBytes is the size prefix of every frame on the wire.
	frameHeaderBytes = 4

	// readBufferBytes is the reader's bufio.Reader: large enough that small
	// frames cost a fraction of a read syscall each, small enough that ten
	// thousand connections hold under a gigabyte. A frame larger than it is
	// read straight into its own allocation.
	readBufferBytes = 64 << 10

	// dialTimeout bounds a TCP handshake. Linux gives up on an unanswered
	// SYN after about two minutes; a node would rather retry sooner. It is
	// sim/simnet's connectTimeoutDefault.
	dialTimeout = 10 * time.Second

	// closeLingerMax bounds how long a connection its owner closed keeps
	// writing what Send had queued before it (a last response, say). A peer
	// that does not read is not waited for beyond it.
	closeLingerMax = 5 * time.Second

	// acceptRetryDelayMin and acceptRetryDelayMax bound the pause after an
	// accept fails for a reason that may pass (out of file descriptors):
	// doubling from the first to the second, as net/http's server does,
	// rather than spinning.
	acceptRetryDelayMin = 5 * time.Millisecond
	acceptRetryDelayMax = time.Second
)
