package simnet

import (
	"errors"
	"fmt"
	"sluice/core"
	"sluice/sim/kernel"
	"testing"
	"time"
)

// recorder is a Handler that remembers everything it was given, and when.
type recorder struct {
	k        *kernel.Kernel
	frames   []string
	at       []int64
	closed   []error
	closedAt int64
	// framesAfterClosed counts frames that arrived after Closed: the
	// contract says there must be none.
	framesAfterClosed int
}

func newRecorder(k *kernel.Kernel) *recorder { return &recorder{k: k} }

func (r *recorder) Frame(frame []byte) {
	if len(r.closed) > 0 {
		r.framesAfterClosed++
	}
	r.frames = append(r.frames, string(frame))
	r.at = append(r.at, r.k.Now())
}

func (r *recorder) Closed(err error) {
	r.closed = append(r.closed, err)
	r.closedAt = r.k.Now()
}

// closedWith reports whether Closed was called exactly once, with err.
func (r *recorder) closedWith(err error) bool {
	return len(r.closed) == 1 && errors.Is(r.closed[0], err)
}

// acceptor is an Acceptor that gives each inbound connection a recorder.
type acceptor struct {
	k         *kernel.Kernel
	conns     []core.Conn
	recorders []*recorder
}

func (a *acceptor) Accept(c core.Conn) core.Handler {
	r := newRecorder(a.k)
	a.conns = append(a.conns, c)
	a.recorders = append(a.recorders, r)
	return r
}

// world is a small network for tests: hosts "a" and "b", with b listening
// on "b:9092".
type world struct {
	k         *kernel.Kernel
	n         *Network
	a, b      *Endpoint
	processA  *kernel.Process
	processB  *kernel.Process
	acceptorB *acceptor
	addressB  string
}

func newWorld(t *testing.T, seed uint64, faults Faults) *world {
	t.Helper()
	k := kernel.NewKernel(seed, nil)
	n := New(k, kernel.NewRand(seed, "net"), faults)
	w := &world{k: k, n: n, processA: kernel.NewProcess("a"), processB: kernel.NewProcess("b"), addressB: "b:9092"}
	w.a = n.Endpoint("a", w.processA)
	w.b = n.Endpoint("b", w.processB)
	w.acceptorB = &acceptor{k: k}
	if err := w.b.Listen(w.addressB, w.acceptorB); err != nil {
		t.Fatalf("listen: %v", err)
	}
	return w
}

// dial connects a to b and runs the kernel until the handshake is complete.
func (w *world) dial(t *testing.T) (dialer core.Conn, dialerRecorder *recorder, listener core.Conn, listenerRecorder *recorder) {
	t.Helper()
	r := newRecorder(w.k)
	c := w.a.Dial(w.addressB, r)
	accepted := len(w.acceptorB.conns)
	w.runUntil(t, func() bool { return len(w.acceptorB.conns) > accepted && established(c) })
	return c, r, w.acceptorB.conns[accepted], w.acceptorB.recorders[accepted]
}

// runUntil steps the kernel until cond holds, failing if events run out.
func (w *world) runUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for !cond() {
		if !w.k.Step() {
			t.Fatalf("ran out of events at %v before the condition held", time.Duration(w.k.Now()))
		}
	}
}

// runAll steps the kernel until nothing is left.
func (w *world) runAll() {
	for w.k.Step() {
	}
}

// numbered returns frames "<prefix>0" .. "<prefix>count-1".
func numbered(prefix string, count int) []string {
	frames := make([]string, count)
	for i := range frames {
		frames[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return frames
}

// sendAll sends each frame and fails if one is refused.
func sendAll(t *testing.T, c core.Conn, frames []string) {
	t.Helper()
	for _, f := range frames {
		if !c.Send([]byte(f)) {
			t.Fatalf("Send(%q) refused", f)
		}
	}
}

// established reports whether a dialer's handshake is complete, so what it
// sends now leaves at once.
func established(c core.Conn) bool {
	x := c.(*end)
	return !x.connection.directions[sideDialer].held
}
