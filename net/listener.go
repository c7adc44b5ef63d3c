package net

import (
	"errors"
	"fmt"
	"log/slog"
	stdnet "net"
	"sync"
	"time"

	"sluice/core"
)

// Listener accepts TCP connections on one address and hands each to an
// Acceptor on the node's loop.
type Listener struct {
	socket   stdnet.Listener
	acceptor core.Acceptor
	post     func(func()) bool
	limits   Limits
	log      *slog.Logger
	registry *registry

	// closing is closed when Close starts; acceptDone when the accept
	// goroutine has returned.
	closing    chan struct{}
	acceptDone chan struct{}
	closeOnce  sync.Once
}

// Listen listens on address (host:port; port 0 picks a free one) and serves
// every connection it accepts: acceptor.Accept runs on the loop (through
// post) and returns the handler that receives the connection's frames, also
// through post. post is the node loop's Post: it runs a function on the
// loop, may wait while the loop is busy, and reports false once the loop has
// stopped. A nil log discards.
func Listen(address string, acceptor core.Acceptor, post func(func()) bool, limits Limits, log *slog.Logger) (*Listener, error) {
	if acceptor == nil {
		return nil, errors.New("net: Listen with a nil Acceptor")
	}
	if post == nil {
		return nil, errors.New("net: Listen with a nil post function")
	}
	if err := limits.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	socket, err := stdnet.Listen("tcp", address)
	if err != nil {
		return nil, fmt.Errorf("net: listen on %q: %w", address, err)
	}
	l := &Listener{
		socket:     socket,
		acceptor:   acceptor,
		post:       post,
		limits:     limits,
		log:        log.With("listener", socket.Addr().String()),
		registry:   newRegistry(limits.ConnectionsMax, limits.QueuedBytesMax),
		closing:    make(chan struct{}),
		acceptDone: make(chan struct{}),
	}
	go l.acceptConnections()
	return l, nil
}

// Addr returns the address the listener is bound to, with the real port
// when Listen was given port 0.
func (l *Listener) Addr() string { return l.socket.Addr().String() }

// Close stops accepting, closes every connection the listener accepted
// (their handlers are not told: the owner is closing them) and waits until
// every goroutine of the listener has returned. Those goroutines may be
// waiting for room in the loop's inbox, so Close must not be called on the
// loop. Closing twice is harmless; the second call returns nil.
func (l *Listener) Close() error {
	var err error
	l.closeOnce.Do(func() {
		close(l.closing)
		l.registry.shutdown()
		err = l.socket.Close()
		<-l.acceptDone
		l.registry.wait()
	})
	return err
}

// acceptConnections accepts until the listener closes.
func (l *Listener) acceptConnections() {
	defer close(l.acceptDone)
	retryDelay := time.Duration(0)
	for {
		socket, err := l.socket.Accept()
		if err != nil {
			if errors.Is(err, stdnet.ErrClosed) {
				return
			}
			// Most often out of file descriptors: wait for some to free
			// up instead of spinning, and stay responsive to Close.
			retryDelay = min(max(2*retryDelay, acceptRetryDelayMin), acceptRetryDelayMax)
			l.log.Warn("net: accept failed; retrying", "error", err, "retry_in", retryDelay)
			retry := time.NewTimer(retryDelay)
			select {
			case <-retry.C:
			case <-l.closing:
				retry.Stop()
				return
			}
			continue
		}
		retryDelay = 0
		l.serve(socket)
	}
}

// serve admits one accepted socket: registers it (or refuses it beyond
// ConnectionsMax), has the acceptor take it on the loop, and starts its
// goroutines.
func (l *Listener) serve(socket stdnet.Conn) {
	setNoDelay(socket)
	c := newConnection(l.post, l.limits, l.log, l.registry, socket.RemoteAddr().String())
	c.socket = socket // not shared with any goroutine yet
	c.preparer, _ = l.acceptor.(FramePreparer)
	if err := l.registry.add(c); err != nil {
		if errors.Is(err, ErrTooManyConnections) {
			c.log.Warn("net: connection refused", "reason", err, "connections_max", l.limits.ConnectionsMax)
		}
		_ = socket.Close()
		return
	}
	// Posted before the reader starts, so it runs before any frame.
	if !l.post(func() { c.accept(l.acceptor) }) {
		c.end(errLoopStopped)
		l.registry.remove(c)
		l.registry.goroutines.Done()
		return
	}
	go func() {
		defer l.registry.goroutines.Done()
		c.serve(socket)
	}()
}
