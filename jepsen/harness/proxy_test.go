package harness

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// echoServer answers every connection with what it receives.
func echoServer(t *testing.T) string {
	t.Helper()
	listener, err := listenLoopback()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { listener.Close() })
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				_, _ = io.Copy(conn, conn)
			}()
		}
	}()
	return listener.Addr().String()
}

// proxyFor puts a proxy for node 1 in front of target; every connection
// counts as the client's.
func proxyFor(t *testing.T, links *Links, target string) *proxy {
	t.Helper()
	listener, err := listenLoopback()
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(1, listener, target, links, func(net.Conn) Endpoint { return Client })
	t.Cleanup(p.Close)
	return p
}

func dial(t *testing.T, address string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// roundTrip writes message and reads as many bytes back.
func roundTrip(t *testing.T, conn net.Conn, message string) string {
	t.Helper()
	if _, err := conn.Write([]byte(message)); err != nil {
		t.Fatal(err)
	}
	return readN(t, conn, len(message))
}

func readN(t *testing.T, conn net.Conn, n int) string {
	t.Helper()
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buffer := make([]byte, n)
	if _, err := io.ReadFull(conn, buffer); err != nil {
		t.Fatalf("reading %d bytes: %v", n, err)
	}
	return string(buffer)
}

// nothingArrives checks that conn receives nothing for a while: a stalled
// link must hold bytes, so any byte is a bug (waiting longer can only
// make the check stricter, never flaky).
func nothingArrives(t *testing.T, conn net.Conn) {
	t.Helper()
	if err := conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	buffer := make([]byte, 1)
	n, err := conn.Read(buffer)
	if n > 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a stalled link let through %q (error %v)", buffer[:n], err)
	}
}

func TestProxyForwardsAndCountsBothWays(t *testing.T) {
	links := NewLinks(1)
	p := proxyFor(t, links, echoServer(t))
	conn := dial(t, p.Addr())
	if got := roundTrip(t, conn, "hello"); got != "hello" {
		t.Fatalf("echo %q, want hello", got)
	}
	if up, down := links.Bytes(Link{Client, 1}), links.Bytes(Link{1, Client}); up != 5 || down != 5 {
		t.Fatalf("bytes client→n1 %d, n1→client %d; want 5 and 5", up, down)
	}
}

func TestProxyStallHoldsBytesAndDeliversThemInOrderOnHeal(t *testing.T) {
	links := NewLinks(1)
	p := proxyFor(t, links, echoServer(t))
	conn := dial(t, p.Addr())
	roundTrip(t, conn, "before")
	links.Set(Link{Client, 1}, LinkState{Mode: Stall})
	for _, part := range []string{"one ", "two ", "three"} {
		if _, err := conn.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	nothingArrives(t, conn)
	if got := links.Bytes(Link{Client, 1}); got != 6 {
		t.Fatalf("client→n1 forwarded %d bytes while stalled, want the 6 sent before", got)
	}
	links.HealAll()
	if got := readN(t, conn, len("one two three")); got != "one two three" {
		t.Fatalf("after healing got %q", got)
	}
}

func TestProxyStallOfOneDirectionStopsOnlyThatDirection(t *testing.T) {
	links := NewLinks(1)
	p := proxyFor(t, links, echoServer(t))
	conn := dial(t, p.Addr())
	links.Set(Link{1, Client}, LinkState{Mode: Stall}) // answers held
	if _, err := conn.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	nothingArrives(t, conn)
	if got := links.Bytes(Link{Client, 1}); got != 4 {
		t.Fatalf("client→n1 forwarded %d bytes, want 4: only the other direction is cut", got)
	}
	links.HealAll()
	if got := readN(t, conn, 4); got != "ping" {
		t.Fatalf("after healing got %q", got)
	}
}

func TestProxyResetBreaksConnectionsAndRefusesNewOnes(t *testing.T) {
	links := NewLinks(1)
	p := proxyFor(t, links, echoServer(t))
	conn := dial(t, p.Addr())
	roundTrip(t, conn, "x")
	links.Set(Link{1, Client}, LinkState{Mode: Reset})
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the connection survived a reset: %v", err)
	}
	// The proxy aborts a new connection as soon as it accepts it: on
	// loopback the reset can reach the client before its dial has
	// returned, which refuses the connection as surely as a failed read.
	if fresh, err := net.Dial("tcp", p.Addr()); err == nil {
		t.Cleanup(func() { fresh.Close() })
		if err := fresh.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := fresh.Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("a new connection was served across a reset link: %v", err)
		}
	} else if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("dialing across a reset link: %v, want a reset", err)
	}
	links.HealAll()
	if got := roundTrip(t, dial(t, p.Addr()), "again"); got != "again" {
		t.Fatalf("after healing got %q", got)
	}
}

func TestProxyDelayKeepsOrder(t *testing.T) {
	links := NewLinks(1)
	p := proxyFor(t, links, echoServer(t))
	conn := dial(t, p.Addr())
	const delay = 50 * time.Millisecond
	links.Set(Link{Client, 1}, LinkState{Delay: delay})
	var sent bytes.Buffer
	started := time.Now()
	for i := range 20 {
		part := []byte{byte('a' + i)}
		sent.Write(part)
		if _, err := conn.Write(part); err != nil {
			t.Fatal(err)
		}
	}
	if got := readN(t, conn, sent.Len()); got != sent.String() {
		t.Fatalf("delayed bytes arrived as %q, want %q", got, sent.String())
	}
	if elapsed := time.Since(started); elapsed < delay {
		t.Fatalf("the echo came back after %v, sooner than the link's %v delay", elapsed, delay)
	}
}

func TestLinksPartitionCutsOnlyAcrossSides(t *testing.T) {
	links := NewLinks(3)
	links.Partition(Stall, []Endpoint{1}, []Endpoint{2, 3})
	for _, c := range []struct {
		link Link
		want Mode
	}{
		{Link{1, 2}, Stall}, {Link{2, 1}, Stall}, {Link{1, 3}, Stall}, {Link{3, 1}, Stall},
		{Link{2, 3}, Pass}, {Link{3, 2}, Pass}, {Link{Client, 1}, Pass}, {Link{1, Client}, Pass},
	} {
		if state, _ := links.State(c.link); state.Mode != c.want {
			t.Errorf("%s is %s, want %s", c.link, state.Mode, c.want)
		}
	}
	if got := links.Faulty(); got != "n1→n2 stall, n1→n3 stall, n2→n1 stall, n3→n1 stall" {
		t.Errorf("Faulty() = %q", got)
	}
	links.Set(Link{Client, 2}, LinkState{Mode: Reset})
	links.Partition(Reset, []Endpoint{1, 2}, []Endpoint{3})
	if got := links.Faulty(); got != "client→n2 reset, n1→n3 reset, n2→n3 reset, n3→n1 reset, n3→n2 reset" {
		t.Errorf("a second partition replaces the first, leaving clients' links: Faulty() = %q", got)
	}
	links.HealAll()
	if got := links.Faulty(); got != "none" {
		t.Errorf("after HealAll, Faulty() = %q", got)
	}
}
