package net

import "sluice/core"

// Preparing frames off the loop (DESIGN.md §7: "decode in the connection
// goroutine, CRC-check there, hand the loop a validated batch").
//
// A listener's Acceptor may also be a FramePreparer. The reader goroutine
// of each connection it accepts then runs PrepareFrame on every frame it
// reads, before posting it, and the loop hands the result to the handler's
// PreparedFrame instead of calling Frame. The work that needs nothing but
// the frame's bytes (decoding the request, checking record batch CRCs) so
// runs on the connection's goroutine, in parallel with the loop and with
// other connections, and the loop gets a request ready to act on.
//
// The simulator has no reader goroutines: its handlers' Frame calls the
// same preparation inline, so both worlds run the same code.

// FramePreparer prepares a frame on the connection's reader goroutine.
// PrepareFrame must be a pure function of the frame: it runs concurrently
// with the loop and with other connections' readers, so it may read no
// state of the node and must not change the frame. A nil result means
// nothing was prepared: the handler's Frame gets the frame.
type FramePreparer interface {
	PrepareFrame(frame []byte) any
}

// PreparedHandler is a core.Handler that takes frames a FramePreparer
// prepared: PreparedFrame is called, on the loop, in place of Frame, with
// the frame and what PrepareFrame returned for it.
type PreparedHandler interface {
	core.Handler
	PreparedFrame(frame []byte, prepared any)
}

// arrivedFrame is a frame read from the socket, with what the preparer
// made of it (nil when there is no preparer).
type arrivedFrame struct {
	bytes    []byte
	prepared any
}

// deliver hands a frame to the handler, prepared when it can take it so.
func (c *connection) deliver(frame arrivedFrame) {
	if frame.prepared != nil {
		if prepared, ok := c.handler.(PreparedHandler); ok {
			prepared.PreparedFrame(frame.bytes, frame.prepared)
			return
		}
	}
	c.handler.Frame(frame.bytes)
}
