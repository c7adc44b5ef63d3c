package simnet

import "errors"

// The errors a Handler's Closed receives, besides io.EOF (the other end
// closed the connection after sending everything it had sent).
var (
	// ErrConnectionRefused: nothing listens at the dialed address, or the
	// listening process is not running.
	ErrConnectionRefused = errors.New("simnet: connection refused")

	// ErrConnectionReset: the connection was reset, by the network or
	// because the process at the other end crashed; frames in flight were
	// lost.
	ErrConnectionReset = errors.New("simnet: connection reset by peer")

	// ErrConnectTimeout: the handshake did not complete within
	// Faults.ConnectTimeout, because a cut lay on its path.
	ErrConnectTimeout = errors.New("simnet: connect timed out")

	// ErrStallTimeout: a frame waited behind a cut longer than
	// Faults.StallBreakAfter (TCP's user timeout).
	ErrStallTimeout = errors.New("simnet: connection timed out while stalled")

	// ErrSendQueueFull: a Send would have queued more than
	// directionQueueBytesMax undelivered bytes, or directionQueueFramesMax
	// frames, on one direction.
	ErrSendQueueFull = errors.New("simnet: send queue full")

	// ErrTooManyConnections: a dial would have passed connectionsMax.
	ErrTooManyConnections = errors.New("simnet: too many connections")

	// ErrBadAddress: the dialed address is not of the form host:port.
	ErrBadAddress = errors.New("simnet: bad address")
)
