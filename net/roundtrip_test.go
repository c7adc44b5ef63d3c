package net

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"sluice/core"
)

// frameSizes covers the edges of the framing and of the read buffer.
var frameSizes = []int{
	0, 1, 2, 3, 4, 5, 100, 1000,
	readBufferBytes - 1, readBufferBytes, readBufferBytes + 1,
	1 << 20, 0, 1,
}

func TestFramesRoundTripInOrderBothWays(t *testing.T) {
	server, client := startNode(t), startNode(t)
	a := newAcceptor(echo)
	l := listen(t, server, a, DefaultLimits())
	d := newTestDialer(t, client, DefaultLimits())
	conn, echoes := dial(t, client, d, l.Addr())

	var sent [][]byte
	for i, size := range frameSizes {
		sent = append(sent, patterned(i, size))
	}
	// A run of small frames, which the writer batches into few writevs.
	for i := range 1000 {
		sent = append(sent, patterned(len(frameSizes)+i, i%50))
	}
	client.do(t, func() {
		for i, frame := range sent {
			// Send takes ownership: hand it a copy so sent stays ours.
			if !conn.Send(append([]byte(nil), frame...)) {
				t.Errorf("Send of frame %d refused", i)
			}
		}
	})

	s := a.next(t)
	received := s.recorder.waitForFrames(t, len(sent))
	sameFrames(t, "server received", received, sent)
	returned := echoes.waitForFrames(t, len(sent))
	sameFrames(t, "client received", returned, sent)
	if _, closes := echoes.snapshot(); len(closes) != 0 {
		t.Fatalf("client handler closed: %v", closes)
	}
}

func TestManyConnectionsAtOnceKeepEachOrder(t *testing.T) {
	const connections, framesEach = 16, 200
	server, client := startNode(t), startNode(t)
	l := listen(t, server, newAcceptor(echo), DefaultLimits())
	d := newTestDialer(t, client, DefaultLimits())

	conns := make([]core.Conn, connections)
	recorders := make([]*recorder, connections)
	for i := range conns {
		conns[i], recorders[i] = dial(t, client, d, l.Addr())
	}
	want := make([][][]byte, connections)
	for i := range conns {
		for j := range framesEach {
			want[i] = append(want[i], patterned(i*framesEach+j, 1+j%300))
		}
	}
	// Interleave the sends over the connections, turn by turn.
	for j := range framesEach {
		client.do(t, func() {
			for i, c := range conns {
				c.Send(append([]byte(nil), want[i][j]...))
			}
		})
	}
	for i, r := range recorders {
		got, _ := r.waitFor(t, "echoes", func(frames [][]byte, closes []error) bool {
			return len(frames) >= framesEach || len(closes) > 0
		})
		sameFrames(t, fmt.Sprintf("connection %d", i), got, want[i])
	}
}

func TestPeerCloseReportsEOFOnceAfterEveryFrame(t *testing.T) {
	server, client := startNode(t), startNode(t)
	a := newAcceptor(nil)
	l := listen(t, server, a, DefaultLimits())
	d := newTestDialer(t, client, DefaultLimits())
	conn, clientSide := dial(t, client, d, l.Addr())

	sent := [][]byte{patterned(1, 10), patterned(2, 0), patterned(3, 70_000)}
	client.do(t, func() {
		for _, frame := range sent {
			conn.Send(append([]byte(nil), frame...))
		}
		// Close right away: what was queued still goes, then the FIN.
		conn.Close()
	})
	s := a.next(t)
	frames, closes := s.recorder.waitFor(t, "Closed", func(_ [][]byte, closes []error) bool { return len(closes) > 0 })
	sameFrames(t, "server received", frames, sent)
	if !errors.Is(closes[0], io.EOF) {
		t.Fatalf("server Closed(%v), want io.EOF", closes[0])
	}

	// Once every goroutine is gone nothing more can be posted; the loop
	// then runs anything already posted before do's function.
	d.Close()
	if err := l.Close(); err != nil {
		t.Fatalf("Listener.Close: %v", err)
	}
	server.do(t, func() {})
	client.do(t, func() {})
	if _, closes := s.recorder.snapshot(); len(closes) != 1 {
		t.Fatalf("server handler Closed %d times: %v", len(closes), closes)
	}
	if frames, closes := clientSide.snapshot(); len(frames) != 0 || len(closes) != 0 {
		t.Fatalf("the client closed its end, yet its handler got %d frames and Closed %v", len(frames), closes)
	}
}

func TestCloseOnTheLoopStopsCallbacks(t *testing.T) {
	server, client := startNode(t), startNode(t)
	a := newAcceptor(func(c core.Conn, r *recorder) {
		// Close on the first frame, with more on the way.
		r.onFrame = func([]byte) { c.Close() }
	})
	l := listen(t, server, a, DefaultLimits())
	d := newTestDialer(t, client, DefaultLimits())
	conn, clientSide := dial(t, client, d, l.Addr())

	const sent = 50
	client.do(t, func() {
		for i := range sent {
			conn.Send(patterned(i, 1000))
		}
	})
	s := a.next(t)
	// The client learns of the close; the server end must say nothing more.
	if err := clientSide.waitForClosed(t); err == nil {
		t.Fatal("client Closed(nil)")
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Listener.Close: %v", err)
	}
	server.do(t, func() {})
	frames, closes := s.recorder.snapshot()
	if len(frames) != 1 || len(closes) != 0 {
		t.Fatalf("after Close on the first frame, the handler got %d frames and Closed %v; want 1 and none", len(frames), closes)
	}
	server.do(t, func() {
		if s.conn.Send([]byte("late")) {
			t.Error("Send after Close reported true")
		}
	})
}

func TestLastResponseBeforeCloseReachesThePeer(t *testing.T) {
	server, client := startNode(t), startNode(t)
	a := newAcceptor(func(c core.Conn, r *recorder) {
		r.onFrame = func(frame []byte) {
			c.Send(append([]byte("answer to "), frame...))
			c.Close()
		}
	})
	l := listen(t, server, a, DefaultLimits())
	d := newTestDialer(t, client, DefaultLimits())
	conn, clientSide := dial(t, client, d, l.Addr())
	client.do(t, func() { conn.Send([]byte("question")) })
	frames, closes := clientSide.waitFor(t, "Closed", func(_ [][]byte, closes []error) bool { return len(closes) > 0 })
	sameFrames(t, "client received", frames, [][]byte{[]byte("answer to question")})
	if !errors.Is(closes[0], io.EOF) {
		t.Fatalf("client Closed(%v), want io.EOF", closes[0])
	}
}
