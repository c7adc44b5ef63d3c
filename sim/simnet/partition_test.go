package simnet

import (
	"slices"
	"testing"
	"time"
)

func TestPartitionStallsThenHealResumesInOrder(t *testing.T) {
	w := newWorld(t, 5, Faults{LatencyMin: time.Millisecond, LatencyMax: 10 * time.Millisecond})
	dialer, dialerRecorder, listener, listenerRecorder := w.dial(t)
	toB, toA := numbered("a->b ", 50), numbered("b->a ", 50)
	// The first 20 each way are in flight when the partition starts.
	sendAll(t, dialer, toB[:20])
	sendAll(t, listener, toA[:20])
	w.n.Partition([]string{"a"}, []string{"b"})
	sendAll(t, dialer, toB[20:])
	sendAll(t, listener, toA[20:])
	w.k.RunUntil(w.k.Now() + int64(time.Minute))
	if len(listenerRecorder.frames)+len(dialerRecorder.frames) != 0 {
		t.Fatalf("frames crossed a partition: b got %d, a got %d", len(listenerRecorder.frames), len(dialerRecorder.frames))
	}
	if got := w.n.Stats().DirectionsStalled; got != 2 {
		t.Errorf("DirectionsStalled = %d, want 2", got)
	}
	healedAt := w.k.Now()
	w.n.Heal()
	w.runAll()
	if !slices.Equal(listenerRecorder.frames, toB) || !slices.Equal(dialerRecorder.frames, toA) {
		t.Errorf("after the heal b got %q\na got %q\nwant all 50 each way, in order", listenerRecorder.frames, dialerRecorder.frames)
	}
	if listenerRecorder.at[0] < healedAt {
		t.Errorf("first frame arrived at %d, before the heal at %d", listenerRecorder.at[0], healedAt)
	}
	if len(dialerRecorder.closed)+len(listenerRecorder.closed) != 0 {
		t.Errorf("a stall broke the connection without StallBreakAfter: %v %v", dialerRecorder.closed, listenerRecorder.closed)
	}
}

func TestOneWayCutStopsOnlyOneDirection(t *testing.T) {
	w := newWorld(t, 6, Faults{LatencyMin: time.Millisecond, LatencyMax: 5 * time.Millisecond})
	dialer, dialerRecorder, listener, listenerRecorder := w.dial(t)
	w.n.Cut("a", "b")
	toB, toA := numbered("a->b ", 10), numbered("b->a ", 10)
	sendAll(t, dialer, toB)
	sendAll(t, listener, toA)
	w.k.RunUntil(w.k.Now() + int64(time.Minute))
	if len(listenerRecorder.frames) != 0 {
		t.Errorf("b got %q across the cut a->b", listenerRecorder.frames)
	}
	if !slices.Equal(dialerRecorder.frames, toA) {
		t.Errorf("a got %q, want %q: b->a is not cut", dialerRecorder.frames, toA)
	}
	w.n.HealLink("a", "b")
	w.runAll()
	if !slices.Equal(listenerRecorder.frames, toB) {
		t.Errorf("after healing a->b, b got %q, want %q", listenerRecorder.frames, toB)
	}
}

func TestStallBreakAfterBreaksAStalledConnection(t *testing.T) {
	const breakAfter = time.Second
	w := newWorld(t, 7, Faults{LatencyMin: time.Millisecond, LatencyMax: 5 * time.Millisecond, StallBreakAfter: breakAfter})
	dialer, dialerRecorder, listener, listenerRecorder := w.dial(t)
	w.n.Cut("a", "b")
	stalledAt := w.k.Now()
	sendAll(t, dialer, []string{"lost"})
	w.runAll()
	if !dialerRecorder.closedWith(ErrStallTimeout) || !listenerRecorder.closedWith(ErrStallTimeout) {
		t.Fatalf("Closed: a %v, b %v; want ErrStallTimeout once each", dialerRecorder.closed, listenerRecorder.closed)
	}
	if dialerRecorder.closedAt != stalledAt+int64(breakAfter) {
		t.Errorf("broke at %d, want %d (StallBreakAfter after the stall began)", dialerRecorder.closedAt, stalledAt+int64(breakAfter))
	}
	if len(listenerRecorder.frames) != 0 {
		t.Errorf("b got %q from a broken, stalled direction", listenerRecorder.frames)
	}
	if dialer.Send([]byte("x")) || listener.Send([]byte("x")) {
		t.Errorf("Send on a broken connection reported true")
	}
	if s := w.n.Stats(); s.StallBreaks != 1 || s.ConnectionsOpen != 0 || s.FramesDropped != 1 {
		t.Errorf("stats = %+v, want 1 stall break, 1 frame dropped, no open connections", s)
	}
}

func TestIdleConnectionSurvivesAPartition(t *testing.T) {
	w := newWorld(t, 8, Faults{LatencyMin: time.Millisecond, LatencyMax: 5 * time.Millisecond, StallBreakAfter: time.Second})
	dialer, dialerRecorder, _, listenerRecorder := w.dial(t)
	w.n.Partition([]string{"a"}, []string{"b"})
	w.k.RunUntil(w.k.Now() + int64(time.Minute))
	w.n.Heal()
	sendAll(t, dialer, []string{"after"})
	w.runAll()
	if !slices.Equal(listenerRecorder.frames, []string{"after"}) || len(dialerRecorder.closed) != 0 {
		t.Errorf("b got %q, a Closed %v; an idle connection must not break behind a partition", listenerRecorder.frames, dialerRecorder.closed)
	}
}

func TestDialAcrossAPartitionTimesOut(t *testing.T) {
	const timeout = 2 * time.Second
	w := newWorld(t, 9, Faults{LatencyMin: time.Millisecond, LatencyMax: 5 * time.Millisecond, ConnectTimeout: timeout})
	w.n.Partition([]string{"a"}, []string{"b"})
	r := newRecorder(w.k)
	c := w.a.Dial(w.addressB, r)
	if !c.Send([]byte("queued")) {
		t.Errorf("Send while connecting reported false")
	}
	w.runAll()
	if !r.closedWith(ErrConnectTimeout) || r.closedAt != int64(timeout) {
		t.Errorf("Closed %v at %d, want ErrConnectTimeout at %d", r.closed, r.closedAt, int64(timeout))
	}
	if len(w.acceptorB.conns) != 0 {
		t.Errorf("b accepted a connection whose SYN could not reach it")
	}
	if s := w.n.Stats(); s.DialsTimedOut != 1 || s.ConnectionsOpen != 0 {
		t.Errorf("stats = %+v, want 1 timed-out dial, nothing open", s)
	}
}

func TestDialTimesOutWhenOnlyTheSynAckIsCut(t *testing.T) {
	const timeout = 2 * time.Second
	w := newWorld(t, 10, Faults{LatencyMin: time.Millisecond, LatencyMax: 5 * time.Millisecond, ConnectTimeout: timeout})
	w.n.Cut("b", "a")
	r := newRecorder(w.k)
	w.a.Dial(w.addressB, r)
	w.runAll()
	if len(w.acceptorB.recorders) != 1 {
		t.Fatalf("b accepted %d connections, want 1: the SYN's way is open", len(w.acceptorB.recorders))
	}
	if !r.closedWith(ErrConnectTimeout) || !w.acceptorB.recorders[0].closedWith(ErrConnectTimeout) {
		t.Errorf("Closed: a %v, b %v; want ErrConnectTimeout for both", r.closed, w.acceptorB.recorders[0].closed)
	}
}

func TestDialCompletesWhenTheCutHealsInTime(t *testing.T) {
	w := newWorld(t, 11, Faults{LatencyMin: time.Millisecond, LatencyMax: 5 * time.Millisecond, ConnectTimeout: 10 * time.Second})
	w.n.Partition([]string{"a"}, []string{"b"})
	r := newRecorder(w.k)
	c := w.a.Dial(w.addressB, r)
	sendAll(t, c, []string{"one", "two"})
	w.k.RunUntil(int64(time.Second))
	w.n.Heal()
	w.runAll()
	if len(w.acceptorB.recorders) != 1 || !slices.Equal(w.acceptorB.recorders[0].frames, []string{"one", "two"}) {
		t.Fatalf("after the heal b accepted %d connections; want 1 carrying [one two]", len(w.acceptorB.recorders))
	}
	if len(r.closed) != 0 {
		t.Errorf("dialer Closed %v on a connection that got through", r.closed)
	}
}

func TestDialToNobodyAcrossACutTimesOut(t *testing.T) {
	w := newWorld(t, 12, Faults{LatencyMin: time.Millisecond, LatencyMax: 5 * time.Millisecond, ConnectTimeout: 3 * time.Second})
	w.n.Cut("a", "b")
	r := newRecorder(w.k)
	w.a.Dial("b:1", r)
	w.runAll()
	if !r.closedWith(ErrConnectTimeout) || r.closedAt != int64(3*time.Second) {
		t.Errorf("Closed %v at %d; want ErrConnectTimeout after ConnectTimeout: the refusal cannot come back", r.closed, r.closedAt)
	}
}

func TestConnectTimeoutGovernsTheHandshakeNotStallBreakAfter(t *testing.T) {
	const timeout = 2 * time.Second
	w := newWorld(t, 13, Faults{LatencyMin: time.Millisecond, LatencyMax: 5 * time.Millisecond, ConnectTimeout: timeout, StallBreakAfter: 100 * time.Millisecond})
	w.n.Partition([]string{"a"}, []string{"b"})
	r := newRecorder(w.k)
	w.a.Dial(w.addressB, r)
	w.runAll()
	if !r.closedWith(ErrConnectTimeout) || r.closedAt != int64(timeout) {
		t.Errorf("Closed %v at %d, want ErrConnectTimeout at %d", r.closed, r.closedAt, int64(timeout))
	}
}
