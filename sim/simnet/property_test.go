package simnet

import (
	"fmt"
	"io"
	"slices"
	"sluice/core"
	"sluice/sim/kernel"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// modelEnd is the test's account of one end of a connection: what its owner
// sent, and what its handler was given.
type modelEnd struct {
	host          string
	conn          core.Conn
	sent          []string
	received      []string
	closed        []error
	closedLocally bool // its owner called Close
	crashed       bool // its process crashed
	// callbacksAfterDone counts Frame or Closed calls after Close, a crash
	// or a first Closed: the contract allows none.
	callbacksAfterDone int
}

func (m *modelEnd) done() bool { return m.closedLocally || m.crashed || len(m.closed) > 0 }

func (m *modelEnd) Frame(frame []byte) {
	if m.done() {
		m.callbacksAfterDone++
	}
	m.received = append(m.received, string(frame))
}

func (m *modelEnd) Closed(err error) {
	if m.done() {
		m.callbacksAfterDone++
	}
	m.closed = append(m.closed, err)
}

// modelPair is one dial: the dialer's end, and the listener's once accepted.
type modelPair struct {
	dialer, listener *modelEnd
}

type modelNetwork struct {
	pairs []*modelPair
}

// modelAcceptor pairs each accepted end with the dial it came from.
type modelAcceptor struct {
	host  string
	model *modelNetwork
}

func (a *modelAcceptor) Accept(c core.Conn) core.Handler {
	x := c.(*end)
	for _, p := range a.model.pairs {
		if d, ok := p.dialer.conn.(*end); ok && d.connection == x.connection {
			if p.listener != nil {
				panic("accepted the same connection twice")
			}
			p.listener = &modelEnd{host: a.host, conn: c}
			return p.listener
		}
	}
	panic("accepted a connection nobody dialed")
}

// TestPropertyEachHandlerSeesAPrefixOfWhatThePeerSent drives random sends,
// closes, dials, cuts, heals, resets and crashes, then checks TCP's promise
// on every connection: a handler sees an in-order prefix of what the other
// end sent, nothing after Closed, everything before a FIN, and, once the
// network heals and drains, everything the other end sent on a connection
// that did not break.
func TestPropertyEachHandlerSeesAPrefixOfWhatThePeerSent(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Uint64().Draw(rt, "seed")
		faults := drawFaults(rt)
		k := kernel.NewKernel(seed, nil)
		n := New(k, kernel.NewRand(seed, "net"), faults)
		hosts := []string{"a", "b", "c"}
		model := &modelNetwork{}
		processes := map[string]*kernel.Process{}
		endpoints := map[string]*Endpoint{}
		listen := func(host string) {
			if err := endpoints[host].Listen(host+":1", &modelAcceptor{host: host, model: model}); err != nil {
				rt.Fatalf("listen %s: %v", host, err)
			}
		}
		for _, h := range hosts {
			processes[h] = kernel.NewProcess(h)
			endpoints[h] = n.Endpoint(h, processes[h])
			listen(h)
		}
		allEnds := func() []*modelEnd {
			var all []*modelEnd
			for _, p := range model.pairs {
				all = append(all, p.dialer)
				if p.listener != nil {
					all = append(all, p.listener)
				}
			}
			return all
		}
		frameNext := 0
		actions := rapid.IntRange(1, 150).Draw(rt, "actions")
		for range actions {
			switch rapid.IntRange(0, 9).Draw(rt, "action") {
			case 0: // dial
				from := rapid.SampledFrom(hosts).Draw(rt, "from")
				to := rapid.SampledFrom(append([]string{"nobody"}, hosts...)).Draw(rt, "to")
				m := &modelEnd{host: from}
				model.pairs = append(model.pairs, &modelPair{dialer: m})
				m.conn = endpoints[from].Dial(to+":1", m)
			case 1, 2: // send
				all := allEnds()
				if len(all) == 0 {
					continue
				}
				m := rapid.SampledFrom(all).Draw(rt, "sender")
				frame := fmt.Sprint(frameNext)
				frameNext++
				if m.conn.Send([]byte(frame)) {
					if m.closedLocally || m.crashed {
						rt.Fatalf("Send succeeded on an end that closed or crashed")
					}
					m.sent = append(m.sent, frame)
				}
			case 3: // close
				all := allEnds()
				if len(all) == 0 {
					continue
				}
				m := rapid.SampledFrom(all).Draw(rt, "closer")
				if !m.crashed {
					m.conn.Close()
					m.closedLocally = true
				}
			case 4: // cut, partition or heal one link
				x, y := rapid.SampledFrom(hosts).Draw(rt, "host x"), rapid.SampledFrom(hosts).Draw(rt, "host y")
				switch rapid.IntRange(0, 2).Draw(rt, "link fault") {
				case 0:
					n.Cut(x, y)
				case 1:
					n.Partition([]string{x}, []string{y})
				default:
					n.HealLink(x, y)
				}
			case 5: // heal
				n.Heal()
			case 6: // reset
				if rapid.Bool().Draw(rt, "reset one") {
					n.ResetRandomConnection()
				} else {
					n.ResetConnections(rapid.SampledFrom(hosts).Draw(rt, "reset host"))
				}
			case 7: // crash and restart
				h := rapid.SampledFrom(hosts).Draw(rt, "crash")
				processes[h].Crash()
				endpoints[h].Crash()
				for _, m := range allEnds() {
					if m.host == h {
						m.crashed = true
					}
				}
				processes[h].Restart()
				listen(h)
			default: // let time pass
				for range rapid.IntRange(1, 20).Draw(rt, "steps") {
					k.Step()
				}
			}
			checkPrefixes(rt, model)
		}
		n.Heal()
		for k.Step() {
		}
		checkPrefixes(rt, model)
		checkDrained(rt, model)
		stats := n.Stats()
		if stats.FramesSent != stats.FramesDelivered+stats.FramesDropped {
			rt.Fatalf("stats after draining: sent %d != delivered %d + dropped %d", stats.FramesSent, stats.FramesDelivered, stats.FramesDropped)
		}
		open := 0
		for _, p := range model.pairs {
			if p.listener != nil && !p.dialer.done() && !p.listener.done() {
				open++
			}
		}
		if stats.ConnectionsOpen != open {
			rt.Fatalf("ConnectionsOpen = %d, but %d connections have both ends open", stats.ConnectionsOpen, open)
		}
	})
}

func drawFaults(rt *rapid.T) Faults {
	ms := func(label string, low, high int) time.Duration {
		return time.Duration(rapid.IntRange(low, high).Draw(rt, label)) * time.Millisecond
	}
	f := Faults{LatencyMin: ms("latency min", 0, 5)}
	f.LatencyMax = f.LatencyMin + ms("latency spread", 0, 50)
	if rapid.Bool().Draw(rt, "bandwidth limited") {
		f.BandwidthBytesPerSecond = rapid.Int64Range(1_000, 1_000_000).Draw(rt, "bandwidth")
	}
	if rapid.Bool().Draw(rt, "stalls break") {
		f.StallBreakAfter = ms("stall break after", 10, 2000)
	}
	f.ConnectTimeout = ms("connect timeout", 0, 2000)
	return f
}

// checkPrefixes checks what must hold at every moment.
func checkPrefixes(rt *rapid.T, model *modelNetwork) {
	for i, p := range model.pairs {
		ends := []*modelEnd{p.dialer, p.listener}
		for side, m := range ends {
			if m == nil {
				continue
			}
			if m.callbacksAfterDone != 0 {
				rt.Fatalf("pair %d side %d: %d callbacks after the end was done", i, side, m.callbacksAfterDone)
			}
			if len(m.closed) > 1 {
				rt.Fatalf("pair %d side %d: Closed %d times: %v", i, side, len(m.closed), m.closed)
			}
			var peerSent []string
			if peer := ends[1-side]; peer != nil {
				peerSent = peer.sent
			}
			if len(m.received) > len(peerSent) || !slices.Equal(m.received, peerSent[:len(m.received)]) {
				rt.Fatalf("pair %d side %d received %q, not a prefix of what the peer sent, %q", i, side, m.received, peerSent)
			}
			if len(m.closed) == 1 && m.closed[0] == io.EOF && !slices.Equal(m.received, peerSent) {
				rt.Fatalf("pair %d side %d got EOF after %q, but the peer sent %q", i, side, m.received, peerSent)
			}
		}
	}
}

// checkDrained checks what must hold once the network has healed and nothing
// is left to run: every end still open has heard everything its peer sent,
// and every dial that never connected has been told so.
func checkDrained(rt *rapid.T, model *modelNetwork) {
	for i, p := range model.pairs {
		if p.listener == nil {
			if !p.dialer.done() {
				rt.Fatalf("pair %d: a dial that was never accepted is still open", i)
			}
			continue
		}
		ends := []*modelEnd{p.dialer, p.listener}
		for side, m := range ends {
			if m.done() {
				continue
			}
			peer := ends[1-side]
			if peer.done() {
				rt.Fatalf("pair %d side %d is open, but its peer is done (closed %v, crashed %v, Closed %v)", i, side, peer.closedLocally, peer.crashed, peer.closed)
			}
			if !slices.Equal(m.received, peer.sent) {
				rt.Fatalf("pair %d side %d: after draining received %q, peer sent %q", i, side, m.received, peer.sent)
			}
		}
	}
}

func TestPropertyModelAcceptorIsUsed(t *testing.T) {
	// Guards the property test's pairing: an accepted end must be found.
	k := kernel.NewKernel(1, nil)
	n := New(k, kernel.NewRand(1, "net"), Faults{})
	model := &modelNetwork{}
	a := n.Endpoint("a", kernel.NewProcess("a"))
	if err := a.Listen("a:1", &modelAcceptor{host: "a", model: model}); err != nil {
		t.Fatal(err)
	}
	m := &modelEnd{host: "a"}
	model.pairs = append(model.pairs, &modelPair{dialer: m})
	m.conn = a.Dial("a:1", m)
	for k.Step() {
	}
	if model.pairs[0].listener == nil {
		t.Fatalf("the dial was not paired with its accepted end")
	}
}
