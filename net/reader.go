package net

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	stdnet "net"
	"os"
	"time"
)

// serve runs a connection with its socket: the writer on a goroutine of its
// own, the reader on this one. It returns when both have finished, after
// telling the loop (finish). The caller counted this goroutine in the
// registry and marks it done after serve returns.
func (c *connection) serve(socket stdnet.Conn) {
	writerDone := make(chan struct{})
	// The count cannot be zero here (this goroutine is in it), so this
	// Add cannot race with the registry's Wait.
	c.registry.goroutines.Add(1)
	go func() {
		defer c.registry.goroutines.Done()
		defer close(writerDone)
		c.writeFrames(socket)
	}()
	reason := c.end(c.readFrames(socket))
	<-writerDone
	c.finish(reason)
}

// readFrames reads frames and posts each to the loop until the connection
// ends, and returns why it ended (or the reason someone else recorded).
func (c *connection) readFrames(socket stdnet.Conn) error {
	reader := bufio.NewReaderSize(socket, readBufferBytes)
	if err := c.armIdleDeadline(socket); err != nil {
		return err
	}
	var header [frameHeaderBytes]byte
	for {
		if reason := c.waitWhilePaused(); reason != nil {
			return reason
		}
		if err := c.readFull(socket, reader, header[:]); err != nil {
			return err
		}
		// Check the size before allocating anything: a hostile or
		// confused peer announcing 2 GiB must cost nothing.
		size := binary.BigEndian.Uint32(header[:])
		if uint64(size) > uint64(c.limits.FrameBytesMax) {
			return fmt.Errorf("%w: the peer announced %d bytes, the limit is %d",
				ErrFrameTooLarge, size, c.limits.FrameBytesMax)
		}
		if !c.registry.queued.reserve(int64(size), c.isEnded) {
			return c.end(errClosedByOwner)
		}
		frame := make([]byte, size)
		if err := c.readFull(socket, reader, frame); err != nil {
			c.registry.queued.release(int64(size))
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		if c.closingFlag.Load() {
			// The owner closed; the frame would be dropped on the loop.
			// Reading on keeps the kernel from answering the peer with a
			// reset while the last writes linger.
			c.registry.queued.release(int64(size))
			continue
		}
		arrived := arrivedFrame{bytes: frame}
		if c.preparer != nil {
			arrived.prepared = c.preparer.PrepareFrame(frame)
		}
		// The reservation ends once the loop has taken the frame
		// (delivered it, held it behind a pause, or dropped it).
		posted := c.post(func() {
			defer c.registry.queued.release(int64(size))
			c.frameArrived(arrived)
		})
		if !posted {
			c.registry.queued.release(int64(size))
			return errLoopStopped
		}
	}
}

// waitWhilePaused parks the reader while receiving is paused, so that the
// kernel's socket buffer fills and TCP pushes back on the peer. It returns
// the reason the connection ended, if it has.
func (c *connection) waitWhilePaused() error {
	c.mutex.Lock()
	defer c.mutex.Unlock()
	if c.readerPaused && !c.ended && !c.closing {
		c.readerParked = true
		for c.readerPaused && !c.ended && !c.closing {
			c.readerWake.Wait()
		}
		c.readerParked = false
		// A pause is not idleness: the node chose it.
		c.noteActivity()
	}
	if c.ended {
		return c.reason
	}
	return nil
}

// readFull fills buffer from reader. A read deadline that passes only
// means it is time to check for idleness; it is not an error unless the
// connection really was idle.
func (c *connection) readFull(socket stdnet.Conn, reader *bufio.Reader, buffer []byte) error {
	filled := 0
	for filled < len(buffer) {
		n, err := reader.Read(buffer[filled:])
		filled += n
		if n > 0 {
			c.noteActivity()
		}
		if filled == len(buffer) {
			// Whatever error came with the last bytes comes back on the
			// next read.
			return nil
		}
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded):
			if err := c.extendIdleDeadline(socket); err != nil {
				return err
			}
		case errors.Is(err, io.EOF) && filled > 0:
			return io.ErrUnexpectedEOF
		default:
			return err
		}
	}
	return nil
}

// noteActivity records that a byte moved now, when idleness is watched.
func (c *connection) noteActivity() {
	if c.limits.IdleTimeout > 0 {
		c.lastActivity.Store(int64(time.Since(c.born)))
	}
}

// armIdleDeadline sets the first read deadline, when idleness is watched.
func (c *connection) armIdleDeadline(socket stdnet.Conn) error {
	if c.limits.IdleTimeout <= 0 {
		return nil
	}
	c.noteActivity()
	return socket.SetReadDeadline(time.Now().Add(c.limits.IdleTimeout))
}

// extendIdleDeadline runs when the read deadline passes. The deadline is
// not pushed back on every read (that costs a timer update per frame);
// instead, when it passes, the connection is idle only if nothing was read
// or written since, and otherwise the deadline moves to IdleTimeout after
// the last activity.
func (c *connection) extendIdleDeadline(socket stdnet.Conn) error {
	idleTimeout := c.limits.IdleTimeout
	if idleTimeout <= 0 {
		panic("net: a read deadline passed on a connection without an idle timeout")
	}
	last := time.Duration(c.lastActivity.Load())
	quiet := time.Since(c.born) - last
	if quiet >= idleTimeout {
		return fmt.Errorf("%w: nothing read or written for %v", ErrIdleTimeout, quiet.Round(time.Millisecond))
	}
	return socket.SetReadDeadline(c.born.Add(last + idleTimeout))
}
