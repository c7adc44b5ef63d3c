package net

import (
	"errors"
	"io"
	"runtime"
	"syscall"
	"testing"

	"sluice/core"
)

// settledGoroutines polls until the process runs at most want goroutines:
// exiting goroutines take a moment to be counted out after they finish.
func settledGoroutines(t *testing.T, want int) {
	t.Helper()
	pollUntil(t, "goroutines to exit", func() bool { return runtime.NumGoroutine() <= want })
}

func TestListenerAndDialerCloseLeaveNoGoroutines(t *testing.T) {
	server, client := startNode(t), startNode(t)
	before := runtime.NumGoroutine()

	a := newAcceptor(echo)
	l, err := Listen("127.0.0.1:0", a, server.loop.Post, DefaultLimits(), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDialer(client.loop.Post, DefaultLimits(), nil)
	var recorders []*recorder
	for i := range 8 {
		conn, r := dial(t, client, d, l.Addr())
		recorders = append(recorders, r)
		client.do(t, func() { conn.Send(patterned(i, 1000)) })
	}
	for _, r := range recorders {
		r.waitForFrames(t, 1)
	}
	// A refused dial's goroutine must be gone too.
	_, refused := dial(t, client, d, "127.0.0.1:1")
	refused.waitForClosed(t)
	if got := runtime.NumGoroutine(); got <= before {
		t.Fatalf("%d goroutines with 8 live connections, no more than the %d before", got, before)
	}

	if err := l.Close(); err != nil {
		t.Fatalf("Listener.Close: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Listener.Close: %v", err)
	}
	d.Close()
	d.Close()
	settledGoroutines(t, before)
	if l.registry.count() != 0 || d.registry.count() != 0 {
		t.Fatalf("registries still hold %d and %d connections", l.registry.count(), d.registry.count())
	}
}

func TestListenerCloseClosesAcceptedConnectionsSilently(t *testing.T) {
	server, client := startNode(t), startNode(t)
	a := newAcceptor(func(c core.Conn, _ *recorder) {})
	l, err := Listen("127.0.0.1:0", a, server.loop.Post, DefaultLimits(), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := newTestDialer(t, client, DefaultLimits())
	_, clientSide := dial(t, client, d, l.Addr())
	s := a.next(t)
	paused := rawClient(t, l.Addr())
	pausedSide := a.next(t)
	server.do(t, pausedSide.conn.PauseReceiving)

	if err := l.Close(); err != nil {
		t.Fatalf("Listener.Close: %v", err)
	}
	if err := clientSide.waitForClosed(t); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("client Closed(%v), want EOF or a reset", err)
	}
	if _, err := io.ReadAll(paused); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("raw peer read: %v", err)
	}
	server.do(t, func() {})
	for _, side := range []serverSide{s, pausedSide} {
		if frames, closes := side.recorder.snapshot(); len(frames) != 0 || len(closes) != 0 {
			t.Fatalf("a handler closed by Listener.Close got %d frames and Closed %v", len(frames), closes)
		}
	}
	// And nothing listens any more.
	_, again := dial(t, client, d, l.Addr())
	if err := again.waitForClosed(t); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial after Listener.Close: Closed(%v), want ECONNREFUSED", err)
	}
}

func TestAStoppedLoopEndsConnections(t *testing.T) {
	server, client := startNode(t), startNode(t)
	before := runtime.NumGoroutine()
	a := newAcceptor(nil)
	l := listen(t, server, a, DefaultLimits())
	d := newTestDialer(t, client, DefaultLimits())
	conn, _ := dial(t, client, d, l.Addr())
	a.next(t)
	server.loop.Stop()
	// The server's reader finds the loop gone on its next frame and ends
	// the connection; the client sees it close.
	client.do(t, func() { conn.Send([]byte("anyone?")) })
	pollUntil(t, "the listener to drop the connection", func() bool { return l.registry.count() == 0 })
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	d.Close()
	settledGoroutines(t, before)
}
