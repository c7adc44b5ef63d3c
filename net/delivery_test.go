package net

import (
	"errors"
	"io"
	"syscall"
	"testing"
)

// These tests drive the loop side of a connection (delivery.go) directly,
// as the reader would, with no socket: every interleaving is chosen here.

func newLoopSideConnection(t *testing.T, n *node) (*connection, *recorder) {
	t.Helper()
	c := newConnection(n.loop.Post, DefaultLimits(), discardLog(), newRegistry(1, DefaultLimits().QueuedBytesMax), "peer")
	r := newRecorder()
	c.handler = r
	return c, r
}

func TestHeldFramesAndACleanCloseWaitForResume(t *testing.T) {
	n := startNode(t)
	c, r := newLoopSideConnection(t, n)
	n.do(t, func() {
		c.frameArrived(arrivedFrame{bytes: []byte("a")})
		c.PauseReceiving()
		c.frameArrived(arrivedFrame{bytes: []byte("b")})
		c.frameArrived(arrivedFrame{bytes: []byte("c")})
	})
	n.do(t, func() {
		if frames, closes := r.snapshot(); len(frames) != 1 || len(closes) != 0 {
			t.Errorf("while paused: %d frames, Closed %v; want only the first frame", len(frames), closes)
		}
		c.ResumeReceiving()
		// A frame and the peer's close arriving after resume, before the
		// held frames are delivered, go behind them.
		c.frameArrived(arrivedFrame{bytes: []byte("d")})
		c.endArrived(io.EOF)
	})
	n.do(t, func() {})
	frames, closes := r.snapshot()
	sameFrames(t, "delivered", frames, [][]byte{[]byte("a"), []byte("b"), []byte("c"), []byte("d")})
	if len(closes) != 1 || !errors.Is(closes[0], io.EOF) {
		t.Fatalf("Closed %v, want one io.EOF after the frames", closes)
	}
}

func TestACleanCloseWhilePausedWaitsForResume(t *testing.T) {
	n := startNode(t)
	c, r := newLoopSideConnection(t, n)
	n.do(t, func() {
		c.PauseReceiving()
		c.endArrived(io.EOF)
	})
	if _, closes := r.snapshot(); len(closes) != 0 {
		t.Fatalf("Closed %v while paused", closes)
	}
	n.do(t, c.ResumeReceiving)
	n.do(t, func() {})
	if _, closes := r.snapshot(); len(closes) != 1 || !errors.Is(closes[0], io.EOF) {
		t.Fatalf("Closed %v after resume, want one io.EOF", closes)
	}
}

func TestABreakDropsHeldFramesAndIsReportedWhilePaused(t *testing.T) {
	n := startNode(t)
	c, r := newLoopSideConnection(t, n)
	n.do(t, func() {
		c.PauseReceiving()
		c.frameArrived(arrivedFrame{bytes: []byte("a")})
		c.endArrived(syscall.ECONNRESET)
	})
	frames, closes := r.snapshot()
	if len(frames) != 0 || len(closes) != 1 || !errors.Is(closes[0], syscall.ECONNRESET) {
		t.Fatalf("got %d frames and Closed %v; want no frame and ECONNRESET", len(frames), closes)
	}
	n.do(t, c.ResumeReceiving)
	n.do(t, func() {})
	if frames, _ := r.snapshot(); len(frames) != 0 {
		t.Fatal("a held frame was delivered after Closed")
	}
}

func TestNothingArrivesAfterClose(t *testing.T) {
	n := startNode(t)
	c, r := newLoopSideConnection(t, n)
	n.do(t, func() {
		c.PauseReceiving()
		c.frameArrived(arrivedFrame{bytes: []byte("held")})
		c.Close()
		c.ResumeReceiving()
		c.frameArrived(arrivedFrame{bytes: []byte("late")})
		c.endArrived(io.EOF)
	})
	n.do(t, func() {})
	if frames, closes := r.snapshot(); len(frames) != 0 || len(closes) != 0 {
		t.Fatalf("after Close: %d frames, Closed %v", len(frames), closes)
	}
}

func TestPauseInsideHeldDeliveryStopsIt(t *testing.T) {
	n := startNode(t)
	c, r := newLoopSideConnection(t, n)
	r.onFrame = func(frame []byte) {
		if string(frame) == "b" {
			c.PauseReceiving()
		}
	}
	n.do(t, func() {
		c.PauseReceiving()
		for _, frame := range []string{"a", "b", "c"} {
			c.frameArrived(arrivedFrame{bytes: []byte(frame)})
		}
		c.ResumeReceiving()
	})
	n.do(t, func() {})
	frames, _ := r.snapshot()
	sameFrames(t, "before the second pause", frames, [][]byte{[]byte("a"), []byte("b")})
	n.do(t, c.ResumeReceiving)
	n.do(t, func() {})
	frames, _ = r.snapshot()
	sameFrames(t, "after the second resume", frames, [][]byte{[]byte("a"), []byte("b"), []byte("c")})
}
