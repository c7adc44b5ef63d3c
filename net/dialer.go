package net

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	stdnet "net"
	"sync"

	"sluice/core"
)

// Dialer opens outbound connections: it is the core.Network of a node.
type Dialer struct {
	post     func(func()) bool
	limits   Limits
	log      *slog.Logger
	registry *registry

	// dials is cancelled by Close, to cut handshakes in progress short.
	dials       context.Context
	cancelDials context.CancelFunc
	closeOnce   sync.Once
}

var _ core.Network = (*Dialer)(nil)

// NewDialer returns a Dialer whose handlers run on the loop through post
// (see Listen). A nil log discards. It panics on limits that fail Validate:
// configuration is validated where it is read, so reaching here with bad
// limits is a bug.
func NewDialer(post func(func()) bool, limits Limits, log *slog.Logger) *Dialer {
	if post == nil {
		panic("net: NewDialer with a nil post function")
	}
	if err := limits.Validate(); err != nil {
		panic(fmt.Sprintf("net: NewDialer: %v", err))
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dials, cancelDials := context.WithCancel(context.Background())
	return &Dialer{
		post:        post,
		limits:      limits,
		log:         log,
		registry:    newRegistry(limits.ConnectionsMax, limits.QueuedBytesMax),
		dials:       dials,
		cancelDials: cancelDials,
	}
}

// Dial implements core.Network: it returns at once, queues what is sent
// before the handshake completes, and reports a refused or failed dial as
// h.Closed(err), posted to the loop. It is called on the loop.
func (d *Dialer) Dial(address string, h core.Handler) core.Conn {
	if h == nil {
		panic("net: Dial with a nil Handler")
	}
	c := newConnection(d.post, d.limits, d.log, d.registry, address)
	c.handler = h
	if err := d.registry.add(c); err != nil {
		if errors.Is(err, ErrTooManyConnections) {
			c.log.Warn("net: dial refused", "reason", err, "connections_max", d.limits.ConnectionsMax)
		}
		c.end(err)
		// Posted from the loop, so it cannot wait; it runs on a later turn.
		d.post(func() { c.endArrived(err) })
		return c
	}
	go func() {
		defer d.registry.goroutines.Done()
		c.dialAndServe(d.dials, address)
	}()
	return c
}

// Close closes every connection the dialer opened (their handlers are not
// told), cancels dials in progress and waits until every goroutine of the
// dialer has returned. Like Listener.Close it must not be called on the
// loop. Later Dials report ErrClosed.
func (d *Dialer) Close() {
	d.closeOnce.Do(func() {
		// Shut down first, so a dial cut short by the cancel finds its
		// connection already ended by its owner and reports nothing.
		d.registry.shutdown()
		d.cancelDials()
		d.registry.wait()
	})
}

// dialAndServe completes the handshake, then serves the connection.
func (c *connection) dialAndServe(dials context.Context, address string) {
	dialer := stdnet.Dialer{Timeout: dialTimeout}
	socket, err := dialer.DialContext(dials, "tcp", address)
	if err != nil {
		c.finish(c.end(err))
		return
	}
	setNoDelay(socket)
	if !c.install(socket) {
		// Closed while dialing; end has the reason already.
		_ = socket.Close()
		c.finish(c.end(errClosedByOwner))
		return
	}
	c.serve(socket)
}
