package simnet

import (
	"errors"
	"io"
	"slices"
	"sluice/sim/kernel"
	"testing"
	"time"
)

func TestDialWithNoListenerIsRefusedAfterARoundTrip(t *testing.T) {
	const latency = 10 * time.Millisecond
	w := newWorld(t, 20, Faults{LatencyMin: latency, LatencyMax: latency})
	r := newRecorder(w.k)
	c := w.a.Dial("b:1", r)
	if !c.Send([]byte("hopeful")) {
		t.Errorf("Send before the refusal is known reported false")
	}
	w.runAll()
	if !r.closedWith(ErrConnectionRefused) || r.closedAt != int64(2*latency) {
		t.Errorf("Closed %v at %d, want ErrConnectionRefused at %d", r.closed, r.closedAt, int64(2*latency))
	}
	if c.Send([]byte("x")) {
		t.Errorf("Send after the refusal reported true")
	}
	if s := w.n.Stats(); s.Dials != 1 || s.DialsRefused != 1 {
		t.Errorf("stats = %+v, want 1 dial, refused", s)
	}
}

func TestClosingAFailedDialSilencesIt(t *testing.T) {
	w := newWorld(t, 21, Faults{LatencyMin: time.Millisecond, LatencyMax: time.Millisecond})
	r := newRecorder(w.k)
	w.a.Dial("b:1", r).Close()
	w.runAll()
	if len(r.closed) != 0 {
		t.Errorf("a closed dial's handler was told %v", r.closed)
	}
}

func TestDialWithABadAddressFails(t *testing.T) {
	w := newWorld(t, 22, Faults{})
	for _, address := range []string{"", "b", "b:", ":9092", "b:port"} {
		r := newRecorder(w.k)
		w.a.Dial(address, r)
		if len(r.closed) != 0 {
			t.Fatalf("Dial(%q) called Closed inside Dial", address)
		}
		w.runAll()
		if !r.closedWith(ErrBadAddress) {
			t.Errorf("Dial(%q): Closed %v, want ErrBadAddress", address, r.closed)
		}
	}
}

func TestCloseDeliversWhatWasSentThenEOF(t *testing.T) {
	w := newWorld(t, 23, Faults{LatencyMin: time.Millisecond, LatencyMax: 20 * time.Millisecond})
	dialer, dialerRecorder, listener, listenerRecorder := w.dial(t)
	toB := numbered("a->b ", 10)
	sendAll(t, dialer, toB)
	dialer.Close()
	if dialer.Send([]byte("late")) {
		t.Errorf("Send after Close reported true")
	}
	// b has not heard of the close yet: its writes succeed and are lost.
	if !listener.Send([]byte("into the void")) {
		t.Errorf("b's Send before the FIN arrived reported false")
	}
	w.runAll()
	if !slices.Equal(listenerRecorder.frames, toB) || !listenerRecorder.closedWith(io.EOF) {
		t.Errorf("b got %q then Closed %v; want all 10 frames then io.EOF", listenerRecorder.frames, listenerRecorder.closed)
	}
	if listenerRecorder.framesAfterClosed != 0 {
		t.Errorf("b got %d frames after Closed", listenerRecorder.framesAfterClosed)
	}
	if len(dialerRecorder.closed) != 0 || len(dialerRecorder.frames) != 0 {
		t.Errorf("the closing end's handler got frames %q and Closed %v; it must get nothing", dialerRecorder.frames, dialerRecorder.closed)
	}
	if listener.Send([]byte("x")) {
		t.Errorf("Send after Closed(EOF) reported true")
	}
	if s := w.n.Stats(); s.ConnectionsOpen != 0 || s.FramesDropped != 1 {
		t.Errorf("stats = %+v, want no open connections and b's one frame dropped", s)
	}
}

func TestCloseDuringTheHandshakeStillDeliversInOrder(t *testing.T) {
	w := newWorld(t, 24, Faults{LatencyMin: time.Millisecond, LatencyMax: 20 * time.Millisecond})
	r := newRecorder(w.k)
	c := w.a.Dial(w.addressB, r)
	sendAll(t, c, []string{"one", "two"})
	c.Close()
	w.runAll()
	if len(w.acceptorB.recorders) != 1 {
		t.Fatalf("b accepted %d connections, want 1", len(w.acceptorB.recorders))
	}
	got := w.acceptorB.recorders[0]
	if !slices.Equal(got.frames, []string{"one", "two"}) || !got.closedWith(io.EOF) {
		t.Errorf("b got %q then Closed %v; want [one two] then io.EOF", got.frames, got.closed)
	}
	if len(r.closed) != 0 {
		t.Errorf("the closer was told %v", r.closed)
	}
}

func TestCrashDropsInFlightFramesAndResetsThePeer(t *testing.T) {
	const latency = 10 * time.Millisecond
	w := newWorld(t, 25, Faults{LatencyMin: latency, LatencyMax: latency})
	dialer, dialerRecorder, listener, listenerRecorder := w.dial(t)
	sendAll(t, dialer, numbered("a->b ", 5))
	sendAll(t, listener, numbered("b->a ", 5))
	crashedAt := w.k.Now()
	w.processB.Crash()
	w.b.Crash()
	w.runAll()
	if len(listenerRecorder.frames)+len(listenerRecorder.closed) != 0 {
		t.Errorf("the crashed end's handler got frames %q and Closed %v", listenerRecorder.frames, listenerRecorder.closed)
	}
	if len(dialerRecorder.frames) != 0 {
		t.Errorf("a got %q from b's in-flight frames; a crash loses them", dialerRecorder.frames)
	}
	if !dialerRecorder.closedWith(ErrConnectionReset) || dialerRecorder.closedAt != crashedAt+int64(latency) {
		t.Errorf("a Closed %v at %d, want ErrConnectionReset at %d", dialerRecorder.closed, dialerRecorder.closedAt, crashedAt+int64(latency))
	}
	if dialer.Send([]byte("x")) {
		t.Errorf("Send after a reset reported true")
	}
	if s := w.n.Stats(); s.FramesDropped != 10 || s.Crashes != 1 || s.ConnectionsOpen != 0 {
		t.Errorf("stats = %+v, want 10 frames dropped, 1 crash, nothing open", s)
	}

	// The listener went with the process; a restarted one listens anew.
	refused := newRecorder(w.k)
	w.a.Dial(w.addressB, refused)
	w.runAll()
	if !refused.closedWith(ErrConnectionRefused) {
		t.Errorf("dial to a crashed host: Closed %v, want ErrConnectionRefused", refused.closed)
	}
	w.processB.Restart()
	if err := w.b.Listen(w.addressB, w.acceptorB); err != nil {
		t.Fatalf("listen after restart: %v", err)
	}
	again, _, _, againRecorder := w.dial(t)
	sendAll(t, again, []string{"hello again"})
	w.runAll()
	if !slices.Equal(againRecorder.frames, []string{"hello again"}) {
		t.Errorf("after the restart b got %q, want [hello again]", againRecorder.frames)
	}
}

func TestACrashedPeersResetWaitsBehindACut(t *testing.T) {
	w := newWorld(t, 26, Faults{LatencyMin: time.Millisecond, LatencyMax: 5 * time.Millisecond})
	_, dialerRecorder, _, _ := w.dial(t)
	w.n.Cut("b", "a")
	w.processB.Crash()
	w.b.Crash()
	w.k.RunUntil(w.k.Now() + int64(time.Minute))
	if len(dialerRecorder.closed) != 0 {
		t.Fatalf("a learned of b's crash (%v) across a cut", dialerRecorder.closed)
	}
	w.n.Heal()
	w.runAll()
	if !dialerRecorder.closedWith(ErrConnectionReset) {
		t.Errorf("after the heal a Closed %v, want ErrConnectionReset", dialerRecorder.closed)
	}
}

func TestResetConnectionsBreaksEveryConnectionOfAHost(t *testing.T) {
	w := newWorld(t, 27, Faults{LatencyMin: time.Millisecond, LatencyMax: 5 * time.Millisecond})
	first, firstRecorder, _, firstListener := w.dial(t)
	_, secondRecorder, _, secondListener := w.dial(t)
	c := w.n.Endpoint("c", kernel.NewProcess("c"))
	otherRecorder := newRecorder(w.k)
	other := c.Dial(w.addressB, otherRecorder)
	w.runAll()
	sendAll(t, first, []string{"in flight"})
	if got := w.n.ResetConnections("a"); got != 2 {
		t.Errorf("ResetConnections(a) = %d, want 2", got)
	}
	if first.Send([]byte("x")) {
		t.Errorf("Send on a reset connection reported true")
	}
	if len(firstRecorder.closed) != 0 {
		t.Errorf("ResetConnections called Closed inside itself")
	}
	sendAll(t, other, []string{"unaffected"})
	w.runAll()
	for i, r := range []*recorder{firstRecorder, secondRecorder, firstListener, secondListener} {
		if !r.closedWith(ErrConnectionReset) || len(r.frames) != 0 {
			t.Errorf("end %d: frames %q, Closed %v; want no frames, ErrConnectionReset once", i, r.frames, r.closed)
		}
	}
	if len(otherRecorder.closed) != 0 || !slices.Equal(w.acceptorB.recorders[2].frames, []string{"unaffected"}) {
		t.Errorf("c's connection was disturbed by a reset of a's")
	}
	if s := w.n.Stats(); s.Resets != 2 || s.ConnectionsOpen != 1 {
		t.Errorf("stats = %+v, want 2 resets, 1 connection open", s)
	}
}

func TestResetRandomConnection(t *testing.T) {
	w := newWorld(t, 28, Faults{LatencyMin: time.Millisecond, LatencyMax: 5 * time.Millisecond})
	if w.n.ResetRandomConnection() {
		t.Errorf("ResetRandomConnection with no connections reported true")
	}
	_, dialerRecorder, _, listenerRecorder := w.dial(t)
	if !w.n.ResetRandomConnection() {
		t.Errorf("ResetRandomConnection with one connection reported false")
	}
	w.runAll()
	if !dialerRecorder.closedWith(ErrConnectionReset) || !listenerRecorder.closedWith(ErrConnectionReset) {
		t.Errorf("Closed: a %v, b %v; want ErrConnectionReset", dialerRecorder.closed, listenerRecorder.closed)
	}
}

func TestSendPastTheQueueBoundBreaksTheConnection(t *testing.T) {
	w := newWorld(t, 29, Faults{LatencyMin: time.Millisecond, LatencyMax: time.Millisecond})
	dialer, dialerRecorder, _, listenerRecorder := w.dial(t)
	w.n.Cut("a", "b") // nothing drains
	const frameBytes = 1 << 20
	accepted := 0
	for dialer.Send(make([]byte, frameBytes)) {
		accepted++
		if accepted > directionQueueBytesMax/frameBytes {
			t.Fatalf("Send accepted more than %d bytes", directionQueueBytesMax)
		}
	}
	if accepted != directionQueueBytesMax/frameBytes {
		t.Errorf("Send accepted %d frames of 1 MiB, want %d", accepted, directionQueueBytesMax/frameBytes)
	}
	if len(dialerRecorder.closed) != 0 {
		t.Errorf("Send called Closed inside itself")
	}
	w.runAll()
	if !dialerRecorder.closedWith(ErrSendQueueFull) || !listenerRecorder.closedWith(ErrSendQueueFull) {
		t.Errorf("Closed: a %v, b %v; want ErrSendQueueFull", dialerRecorder.closed, listenerRecorder.closed)
	}
	if s := w.n.Stats(); s.Overflows != 1 || s.FramesDropped != int64(accepted) {
		t.Errorf("stats = %+v, want 1 overflow and %d frames dropped", s, accepted)
	}
}

func TestListenRejectsBadRequests(t *testing.T) {
	w := newWorld(t, 30, Faults{})
	if err := w.a.Listen(w.addressB, &acceptor{k: w.k}); err == nil {
		t.Errorf("a second listener on %q was allowed", w.addressB)
	}
	if err := w.a.Listen("nonsense", &acceptor{k: w.k}); !errors.Is(err, ErrBadAddress) {
		t.Errorf("Listen(nonsense) = %v, want ErrBadAddress", err)
	}
	if err := w.a.Listen("a:1", nil); err == nil {
		t.Errorf("Listen with a nil acceptor was allowed")
	}
	w.processA.Crash()
	if err := w.a.Listen("a:1", &acceptor{k: w.k}); err == nil {
		t.Errorf("a crashed process was allowed to listen")
	}
}

func TestEndpointRejectsADuplicateHost(t *testing.T) {
	w := newWorld(t, 31, Faults{})
	defer func() {
		if recover() == nil {
			t.Errorf("a second endpoint for host a was allowed")
		}
	}()
	w.n.Endpoint("a", kernel.NewProcess("a2"))
}

func TestInvalidFaultsAreRejected(t *testing.T) {
	for _, f := range []Faults{
		{LatencyMin: -1},
		{LatencyMin: 2, LatencyMax: 1},
		{BandwidthBytesPerSecond: -1},
		{StallBreakAfter: -1},
		{ConnectTimeout: -1},
	} {
		if f.Validate() == nil {
			t.Errorf("Validate(%+v) = nil, want an error", f)
		}
	}
	if err := (Faults{LatencyMin: 1, LatencyMax: 2}).Validate(); err != nil {
		t.Errorf("valid faults rejected: %v", err)
	}
}

// TestPausedReceiverGetsFramesOnResumeInOrder checks backpressure: while an
// end pauses receiving nothing reaches its handler, not even a FIN, and on
// resume everything arrives in order.
func TestPausedReceiverGetsFramesOnResumeInOrder(t *testing.T) {
	w := newWorld(t, 1, Faults{LatencyMin: time.Millisecond, LatencyMax: 3 * time.Millisecond})
	dialer, _, listener, listenerRecorder := w.dial(t)
	listener.PauseReceiving()
	frames := numbered("f", 5)
	sendAll(t, dialer, frames)
	dialer.Close()
	w.k.RunUntil(w.k.Now() + int64(time.Second))
	if len(listenerRecorder.frames) != 0 || len(listenerRecorder.closed) != 0 {
		t.Fatalf("paused end received %q closed=%v", listenerRecorder.frames, listenerRecorder.closed)
	}
	listener.ResumeReceiving()
	w.runAll()
	if !slices.Equal(listenerRecorder.frames, frames) || !listenerRecorder.closedWith(io.EOF) {
		t.Fatalf("after resume got %q closed=%v", listenerRecorder.frames, listenerRecorder.closed)
	}
}
