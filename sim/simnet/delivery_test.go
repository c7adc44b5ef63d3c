package simnet

import (
	"fmt"
	"slices"
	"sluice/core"
	"sluice/sim/kernel"
	"testing"
	"time"
)

func TestFramesArriveInOrderExactlyOnceUnderRandomLatency(t *testing.T) {
	w := newWorld(t, 1, Faults{LatencyMin: time.Millisecond, LatencyMax: 50 * time.Millisecond})
	dialer, dialerRecorder, listener, listenerRecorder := w.dial(t)
	toB, toA := numbered("a->b ", 500), numbered("b->a ", 500)
	// Interleave sends with a random number of kernel steps, so frames are
	// sent at many different times and overlap in flight.
	steps := kernel.NewRand(1, "test/steps")
	for i := range toB {
		sendAll(t, dialer, toB[i:i+1])
		sendAll(t, listener, toA[i:i+1])
		for range steps.IntN(4) {
			w.k.Step()
		}
	}
	w.runAll()
	if !slices.Equal(listenerRecorder.frames, toB) {
		t.Errorf("b received %d frames, want the %d a sent, in order", len(listenerRecorder.frames), len(toB))
	}
	if !slices.Equal(dialerRecorder.frames, toA) {
		t.Errorf("a received %d frames, want the %d b sent, in order", len(dialerRecorder.frames), len(toA))
	}
	if len(dialerRecorder.closed)+len(listenerRecorder.closed) != 0 {
		t.Errorf("Closed called on a healthy connection: %v %v", dialerRecorder.closed, listenerRecorder.closed)
	}
	stats := w.n.Stats()
	if stats.FramesSent != 1000 || stats.FramesDelivered != 1000 || stats.FramesDropped != 0 {
		t.Errorf("stats = %+v, want 1000 frames sent and delivered, none dropped", stats)
	}
}

func TestHandshakeTakesOneRoundTrip(t *testing.T) {
	const latency = 10 * time.Millisecond
	w := newWorld(t, 1, Faults{LatencyMin: latency, LatencyMax: latency})
	r := newRecorder(w.k)
	c := w.a.Dial(w.addressB, r)
	sendAll(t, c, []string{"early"}) // queued until the SYN-ACK is back
	w.runAll()
	if len(w.acceptorB.recorders) != 1 {
		t.Fatalf("accepted %d connections, want 1", len(w.acceptorB.recorders))
	}
	got := w.acceptorB.recorders[0]
	// SYN at 10ms, SYN-ACK back at 20ms, the frame at 30ms.
	if !slices.Equal(got.frames, []string{"early"}) || got.at[0] != int64(3*latency) {
		t.Errorf("b got %q at %v, want [early] at %v", got.frames, got.at, 3*latency)
	}
	if remote := w.acceptorB.conns[0].RemoteAddr(); remote != fmt.Sprintf("a:%d", ephemeralPortFirst) {
		t.Errorf("listener's RemoteAddr = %q, want a's first ephemeral port", remote)
	}
	if c.RemoteAddr() != w.addressB {
		t.Errorf("dialer's RemoteAddr = %q, want %q", c.RemoteAddr(), w.addressB)
	}
}

func TestLatencyStaysWithinBounds(t *testing.T) {
	const low, high = 5 * time.Millisecond, 40 * time.Millisecond
	w := newWorld(t, 2, Faults{LatencyMin: low, LatencyMax: high})
	dialer, _, _, listenerRecorder := w.dial(t)
	var sentAt []int64
	for i := range 200 {
		w.k.Schedule(int64(i)*int64(time.Millisecond), nil, "test.send", func() {
			sentAt = append(sentAt, w.k.Now())
			sendAll(t, dialer, []string{fmt.Sprint(i)})
		})
	}
	w.runAll()
	if len(listenerRecorder.at) != len(sentAt) {
		t.Fatalf("delivered %d frames, sent %d", len(listenerRecorder.at), len(sentAt))
	}
	distinct := map[int64]bool{}
	for i, at := range listenerRecorder.at {
		took := at - sentAt[i]
		if took < int64(low) || took > int64(high) {
			t.Errorf("frame %d took %v, outside [%v, %v]", i, time.Duration(took), low, high)
		}
		distinct[took] = true
	}
	if len(distinct) < 10 {
		t.Errorf("only %d distinct latencies over 200 frames; latency is not being drawn", len(distinct))
	}
}

// arrival is one frame's arrival, across connections.
type arrival struct {
	frame string
	at    int64
}

// arrivalLog is a Handler that appends to a log shared by several
// connections.
type arrivalLog struct {
	k   *kernel.Kernel
	log *[]arrival
}

func (l arrivalLog) Frame(frame []byte) { *l.log = append(*l.log, arrival{string(frame), l.k.Now()}) }
func (l arrivalLog) Closed(error)       {}

type sharedAcceptor struct {
	log   arrivalLog
	conns []core.Conn
}

func (s *sharedAcceptor) Accept(c core.Conn) core.Handler {
	s.conns = append(s.conns, c)
	return s.log
}

func TestFramesReorderAcrossConnectionsButNeverWithinOne(t *testing.T) {
	k := kernel.NewKernel(3, nil)
	n := New(k, kernel.NewRand(3, "net"), Faults{LatencyMin: time.Millisecond, LatencyMax: 50 * time.Millisecond})
	a := n.Endpoint("a", kernel.NewProcess("a"))
	b := n.Endpoint("b", kernel.NewProcess("b"))
	var log []arrival
	shared := &sharedAcceptor{log: arrivalLog{k: k, log: &log}}
	if err := b.Listen("b:1", shared); err != nil {
		t.Fatal(err)
	}
	conns := []core.Conn{a.Dial("b:1", newRecorder(k)), a.Dial("b:1", newRecorder(k))}
	for len(shared.conns) < 2 {
		k.Step()
	}
	// Frame i goes on connection i%2, one every millisecond.
	var sent []string
	for i := range 100 {
		k.Schedule(int64(i)*int64(time.Millisecond), nil, "test.send", func() {
			frame := fmt.Sprintf("%d:%d", i%2, i)
			sent = append(sent, frame)
			sendAll(t, conns[i%2], []string{frame})
		})
	}
	for k.Step() {
	}
	if len(log) != len(sent) {
		t.Fatalf("%d frames arrived, %d sent", len(log), len(sent))
	}
	perConnection := [2][]string{}
	received := make([]string, len(log))
	for i, a := range log {
		received[i] = a.frame
		connection := a.frame[0] - '0'
		perConnection[connection] = append(perConnection[connection], a.frame)
	}
	for connection, frames := range perConnection {
		var want []string
		for _, f := range sent {
			if f[0]-'0' == byte(connection) {
				want = append(want, f)
			}
		}
		if !slices.Equal(frames, want) {
			t.Errorf("connection %d delivered %q, want %q", connection, frames, want)
		}
	}
	if slices.Equal(received, sent) {
		t.Errorf("100 frames over two connections with 1-50ms latency arrived in send order; reordering never happens")
	}
}

func TestBandwidthSerializesFramesOnTheSendersLink(t *testing.T) {
	const latency = time.Millisecond
	w := newWorld(t, 4, Faults{LatencyMin: latency, LatencyMax: latency, BandwidthBytesPerSecond: 1000})
	first, _, _, firstRecorder := w.dial(t)
	second, _, _, secondRecorder := w.dial(t)
	w.runAll() // finish both handshakes
	start := w.k.Now()
	hundredBytes := string(make([]byte, 100)) // 100ms on a 1000 B/s link
	sendAll(t, first, []string{hundredBytes, hundredBytes})
	sendAll(t, second, []string{hundredBytes})
	w.runAll()
	want := func(frames int) int64 { return start + int64(frames)*int64(100*time.Millisecond) + int64(latency) }
	if !slices.Equal(firstRecorder.at, []int64{want(1), want(2)}) {
		t.Errorf("first connection's frames arrived at %v, want %v", firstRecorder.at, []int64{want(1), want(2)})
	}
	// The second connection shares a's link, so its frame leaves third.
	if !slices.Equal(secondRecorder.at, []int64{want(3)}) {
		t.Errorf("second connection's frame arrived at %v, want %v", secondRecorder.at, []int64{want(3)})
	}
}
