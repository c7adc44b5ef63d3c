package net

import "errors"

// The errors a Handler's Closed may receive, besides io.EOF (the peer closed
// the connection after everything it sent), io.ErrUnexpectedEOF (it closed in
// the middle of a frame) and the operating system's errors (a refused dial,
// a reset connection), which errors.Is matches against syscall.ECONNREFUSED
// and syscall.ECONNRESET.
var (
	// ErrFrameTooLarge: the peer announced a frame larger than
	// Limits.FrameBytesMax.
	ErrFrameTooLarge = errors.New("net: frame larger than FrameBytesMax")

	// ErrSendQueueFull: a Send would have queued more than
	// Limits.SendQueueBytesMax unwritten bytes.
	ErrSendQueueFull = errors.New("net: send queue full")

	// ErrIdleTimeout: nothing was read or written for Limits.IdleTimeout.
	ErrIdleTimeout = errors.New("net: connection idle for longer than IdleTimeout")

	// ErrTooManyConnections: a Dial would have passed Limits.ConnectionsMax.
	ErrTooManyConnections = errors.New("net: too many connections")

	// ErrClosed: the Dialer or Listener was closed.
	ErrClosed = errors.New("net: closed")
)

// Reasons a connection ends that no handler is ever told.
var (
	// errClosedByOwner: Conn.Close, Listener.Close or Dialer.Close. The
	// owner knows; core.Conn promises no Closed after a local Close.
	errClosedByOwner = errors.New("net: closed by its owner")

	// errLoopStopped: post refused a function, so the node's loop is gone
	// and nobody is left to deliver to.
	errLoopStopped = errors.New("net: the node's loop has stopped")
)
