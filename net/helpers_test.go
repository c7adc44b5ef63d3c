package net

import (
	"bytes"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"sluice/core"
	"sluice/node/loop"
)

// testDeadline bounds every wait in these tests. It guards against a hang
// and is never a timing assertion: a healthy run waits milliseconds.
const testDeadline = 20 * time.Second

// testInboxMax is the inbox of every test node's loop.
const testInboxMax = 256

// node is a loop running on its own goroutine, as a Sluice node has.
type node struct {
	loop *loop.Loop
}

func startNode(t testing.TB) *node {
	t.Helper()
	n := &node{loop: loop.New(testInboxMax)}
	returned := make(chan struct{})
	go func() {
		n.loop.Run()
		close(returned)
	}()
	t.Cleanup(func() {
		n.loop.Stop()
		wait(t, returned, "the loop to return")
	})
	return n
}

// do runs f on the loop and waits until it has run. Everything posted to
// the loop before it has run too.
func (n *node) do(t testing.TB, f func()) {
	t.Helper()
	done := make(chan struct{})
	if !n.loop.Post(func() { f(); close(done) }) {
		t.Fatal("the loop refused a post")
	}
	wait(t, done, "a function on the loop")
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

func wait(t testing.TB, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(testDeadline):
		t.Fatalf("timed out after %v waiting for %s", testDeadline, what)
	}
}

// pollUntil polls condition, yielding between polls, until it holds or
// testDeadline passes; for states no channel announces.
func pollUntil(t testing.TB, what string, condition func() bool) {
	t.Helper()
	deadline := time.Now().Add(testDeadline)
	for !condition() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", testDeadline, what)
		}
		time.Sleep(time.Millisecond) // a polling interval, not a synchronization
	}
}

// recorder is a core.Handler that records what arrives. Its methods run on
// the loop; the test goroutine reads through waitFor and snapshot.
type recorder struct {
	// onFrame, if set, runs on the loop after a frame is recorded.
	onFrame func(frame []byte)

	mutex   sync.Mutex
	frames  [][]byte
	closes  []error
	changed chan struct{} // capacity 1: a wake-up, not a count
}

func newRecorder() *recorder {
	return &recorder{changed: make(chan struct{}, 1)}
}

func (r *recorder) Frame(frame []byte) {
	r.mutex.Lock()
	r.frames = append(r.frames, frame)
	r.mutex.Unlock()
	r.notify()
	if r.onFrame != nil {
		r.onFrame(frame)
	}
}

func (r *recorder) Closed(err error) {
	r.mutex.Lock()
	r.closes = append(r.closes, err)
	r.mutex.Unlock()
	r.notify()
}

func (r *recorder) notify() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func (r *recorder) snapshot() ([][]byte, []error) {
	r.mutex.Lock()
	defer r.mutex.Unlock()
	return append([][]byte(nil), r.frames...), append([]error(nil), r.closes...)
}

// waitFor waits until condition holds over what has arrived.
func (r *recorder) waitFor(t testing.TB, what string, condition func(frames [][]byte, closes []error) bool) ([][]byte, []error) {
	t.Helper()
	deadline := time.After(testDeadline)
	for {
		frames, closes := r.snapshot()
		if condition(frames, closes) {
			return frames, closes
		}
		select {
		case <-r.changed:
		case <-deadline:
			t.Fatalf("timed out after %v waiting for %s: %d frames, closes %v", testDeadline, what, len(frames), closes)
		}
	}
}

func (r *recorder) waitForFrames(t testing.TB, count int) [][]byte {
	t.Helper()
	frames, _ := r.waitFor(t, fmt.Sprintf("%d frames", count), func(frames [][]byte, _ []error) bool {
		return len(frames) >= count
	})
	return frames
}

func (r *recorder) waitForClosed(t testing.TB) error {
	t.Helper()
	_, closes := r.waitFor(t, "Closed", func(_ [][]byte, closes []error) bool { return len(closes) > 0 })
	return closes[0]
}

// serverSide is one accepted connection and its recorder.
type serverSide struct {
	conn     core.Conn
	recorder *recorder
}

// acceptor hands every accepted connection to setup (on the loop), then
// reports it on accepted.
type acceptor struct {
	setup    func(c core.Conn, r *recorder)
	accepted chan serverSide
}

func newAcceptor(setup func(c core.Conn, r *recorder)) *acceptor {
	return &acceptor{setup: setup, accepted: make(chan serverSide, 64)}
}

func (a *acceptor) Accept(c core.Conn) core.Handler {
	r := newRecorder()
	if a.setup != nil {
		a.setup(c, r)
	}
	a.accepted <- serverSide{conn: c, recorder: r}
	return r
}

func (a *acceptor) next(t testing.TB) serverSide {
	t.Helper()
	select {
	case s := <-a.accepted:
		return s
	case <-time.After(testDeadline):
		t.Fatalf("timed out after %v waiting for a connection to be accepted", testDeadline)
		panic("unreachable")
	}
}

// echo makes an accepted connection send back every frame it receives.
func echo(c core.Conn, r *recorder) {
	r.onFrame = func(frame []byte) { c.Send(frame) }
}

// listen starts a listener on a free loopback port, closed when the test
// ends.
func listen(t testing.TB, n *node, a core.Acceptor, limits Limits) *Listener {
	t.Helper()
	l, err := Listen("127.0.0.1:0", a, n.loop.Post, limits, nil)
	if err != nil {
		t.Fatalf("Listen: %v", err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func newTestDialer(t testing.TB, n *node, limits Limits) *Dialer {
	t.Helper()
	d := NewDialer(n.loop.Post, limits, nil)
	t.Cleanup(d.Close)
	return d
}

// dial opens a connection on the loop and returns it with its recorder.
func dial(t testing.TB, n *node, d *Dialer, address string) (core.Conn, *recorder) {
	t.Helper()
	r := newRecorder()
	var c core.Conn
	n.do(t, func() { c = d.Dial(address, r) })
	return c, r
}

// patterned returns a frame of size bytes whose content depends on seed,
// so that frames swapped or corrupted in transit do not compare equal.
func patterned(seed, size int) []byte {
	frame := make([]byte, size)
	for i := range frame {
		frame[i] = byte(seed*131 + i*7 + i>>8)
	}
	return frame
}

func sameFrames(t testing.TB, what string, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d frames, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: frame %d differs (%d bytes, want %d)", what, i, len(got[i]), len(want[i]))
		}
	}
}
