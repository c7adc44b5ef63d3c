package net

import (
	"errors"
	"fmt"
	"io"

	"sluice/core"
)

// This file is what the loop does with what the goroutines post. Every
// function here runs on the loop.

// accept hands a new inbound connection to the acceptor. The accept
// goroutine posts it before starting the reader, so it runs before any
// frame of the connection.
func (c *connection) accept(acceptor core.Acceptor) {
	c.mutex.Lock()
	endedByOwner := c.ended && c.reason == errClosedByOwner
	c.mutex.Unlock()
	if endedByOwner {
		// The listener closed before the loop got here: nobody is to hear
		// of this connection.
		c.closedByOwner = true
		return
	}
	handler := acceptor.Accept(c)
	if handler == nil {
		panic(fmt.Sprintf("net: the acceptor returned a nil Handler for a connection from %s", c.remoteAddr))
	}
	c.handler = handler
}

// frameArrived delivers a frame the reader posted, or holds it while
// receiving is paused or earlier frames are still held.
func (c *connection) frameArrived(frame arrivedFrame) {
	if c.closedByOwner {
		return
	}
	if c.closedReported {
		panic(fmt.Sprintf("net: a frame from %s arrived after Closed", c.remoteAddr))
	}
	if c.handler == nil {
		panic(fmt.Sprintf("net: a frame from %s arrived before the connection was accepted", c.remoteAddr))
	}
	if c.receivingPaused || len(c.held) > 0 {
		c.held = append(c.held, frame)
		return
	}
	c.deliver(frame)
}

// endArrived tells the handler the connection ended. A clean close by the
// peer (io.EOF) waits behind frames held by a pause, since the peer sent
// them first; any other end is a break, and what was held is lost, as a
// reset discards what the kernel had received.
func (c *connection) endArrived(reason error) {
	if c.closedByOwner {
		return
	}
	if c.closedReported {
		panic(fmt.Sprintf("net: the connection from %s ended twice", c.remoteAddr))
	}
	if c.handler == nil {
		panic(fmt.Sprintf("net: the connection from %s ended before it was accepted", c.remoteAddr))
	}
	if errors.Is(reason, io.EOF) && (c.receivingPaused || len(c.held) > 0) {
		c.heldEnd = reason
		return
	}
	c.held = nil
	c.heldEnd = nil
	c.closedReported = true
	c.handler.Closed(reason)
}

// scheduleHeldDelivery posts deliverHeld if anything is held and it is not
// already posted. Posting from the loop never waits.
func (c *connection) scheduleHeldDelivery() {
	if c.heldDeliveryPending || (len(c.held) == 0 && c.heldEnd == nil) {
		return
	}
	c.heldDeliveryPending = c.post(c.deliverHeld)
}

// deliverHeld delivers held frames in order, then a held end, stopping if a
// handler pauses receiving or closes the connection.
func (c *connection) deliverHeld() {
	c.heldDeliveryPending = false
	for len(c.held) > 0 && !c.receivingPaused && !c.closedByOwner {
		frame := c.held[0]
		c.held[0] = arrivedFrame{}
		c.held = c.held[1:]
		c.deliver(frame)
	}
	if len(c.held) == 0 {
		c.held = nil
	}
	if len(c.held) == 0 && c.heldEnd != nil && !c.receivingPaused && !c.closedByOwner {
		reason := c.heldEnd
		c.heldEnd = nil
		c.closedReported = true
		c.handler.Closed(reason)
	}
}
