package simnet

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// A host on a slow link sends and receives at the slow link's latency;
// frames stay in order through the change of pace both ways, none is lost,
// and once restored the network's own latency applies again.
func TestASlowLinkDelaysBothWaysInOrderUntilRestored(t *testing.T) {
	const fast, slowLow, slowHigh = time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond
	w := newWorld(t, 5, Faults{LatencyMin: fast, LatencyMax: fast})
	dialer, dialerRecorder, listener, listenerRecorder := w.dial(t)
	var sentAt []int64
	send := func(i int) {
		sentAt = append(sentAt, w.k.Now())
		sendAll(t, dialer, []string{fmt.Sprint(i)})
	}
	// Frames 0-9 before, 10-29 during, 30-39 after the slow window.
	var restore func()
	w.k.Schedule(int64(10*time.Millisecond), nil, "test.slow", func() { restore = w.n.SlowLink("b", slowLow, slowHigh) })
	w.k.Schedule(int64(30*time.Millisecond), nil, "test.restore", func() { restore() })
	for i := range 40 {
		w.k.Schedule(int64(i)*int64(time.Millisecond)+int64(time.Millisecond/2), nil, "test.send", func() { send(i) })
	}
	// The listener answers every frame at once: its answers go over the
	// slow link while it lasts.
	w.k.Schedule(int64(20*time.Millisecond), nil, "test.answer", func() { sendAll(t, listener, []string{"answer"}) })
	w.runAll()

	want := make([]string, 40)
	for i := range want {
		want[i] = fmt.Sprint(i)
	}
	if !slices.Equal(listenerRecorder.frames, want) {
		t.Fatalf("frames arrived %v, want %v in order", listenerRecorder.frames, want)
	}
	for i, at := range listenerRecorder.at {
		took := time.Duration(at - sentAt[i])
		switch {
		case i < 10 && took != fast:
			t.Errorf("frame %d, before the slow link, took %v; want %v", i, took, fast)
		case i >= 10 && i < 30 && (took < slowLow || took > slowHigh+20*time.Millisecond):
			// The upper bound allows for waiting behind an earlier frame.
			t.Errorf("frame %d, on the slow link, took %v; want %v-%v", i, took, slowLow, slowHigh)
		case i >= 30 && took < fast:
			t.Errorf("frame %d took %v, less than the network's latency", i, took)
		}
	}
	// After the window, a frame waits only for those ahead of it: the
	// last one sent lands within the network's latency of the frame
	// before it, not a slow link's latency later.
	if last, before := listenerRecorder.at[39], listenerRecorder.at[29]; time.Duration(last-before) > 10*time.Millisecond+fast {
		t.Errorf("frame 39 arrived %v after frame 29: still slow once restored", time.Duration(last-before))
	}
	if len(dialerRecorder.at) != 1 || time.Duration(dialerRecorder.at[0]-int64(20*time.Millisecond)) < slowLow {
		t.Errorf("the answer sent over the slow link at 20ms arrived at %v; want %v later at least", dialerRecorder.at, slowLow)
	}
}

// Overlapping windows: the latest latency applies, the link stays slow
// until the last window ends, a restore called twice ends one window once,
// and one called after RestoreLinks does nothing.
func TestSlowLinkWindowsOverlap(t *testing.T) {
	w := newWorld(t, 6, Faults{LatencyMin: time.Millisecond, LatencyMax: time.Millisecond})
	first := w.n.SlowLink("b", 100*time.Millisecond, 100*time.Millisecond)
	second := w.n.SlowLink("b", 300*time.Millisecond, 300*time.Millisecond)
	if got := w.n.latencyBetween("a", "b"); got != int64(300*time.Millisecond) {
		t.Fatalf("latency %v with two windows; want the latest's, 300ms", time.Duration(got))
	}
	second()
	second()
	if !slices.Equal(w.n.SlowHosts(), []string{"b"}) {
		t.Fatalf("slow hosts %v after one of two windows ended twice; want b still slow", w.n.SlowHosts())
	}
	first()
	if hosts := w.n.SlowHosts(); len(hosts) != 0 {
		t.Fatalf("slow hosts %v after both windows ended", hosts)
	}
	third := w.n.SlowLink("a", 50*time.Millisecond, 50*time.Millisecond)
	w.n.RestoreLinks()
	fourth := w.n.SlowLink("a", 70*time.Millisecond, 70*time.Millisecond)
	third() // ended by RestoreLinks: must not end the new window
	if got := w.n.latencyBetween("a", "b"); got != int64(70*time.Millisecond) {
		t.Fatalf("latency %v: a restore from before RestoreLinks ended a later window", time.Duration(got))
	}
	fourth()
	if got := w.n.latencyBetween("a", "b"); got != int64(time.Millisecond) {
		t.Fatalf("latency %v once restored; want the network's 1ms", time.Duration(got))
	}
}
