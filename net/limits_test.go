package net

import (
	"encoding/binary"
	"errors"
	"io"
	stdnet "net"
	"runtime"
	"syscall"
	"testing"
	"time"

	"sluice/core"
)

func TestDefaultLimitsAreValidAndBadOnesAreRefused(t *testing.T) {
	if err := DefaultLimits().Validate(); err != nil {
		t.Fatalf("DefaultLimits: %v", err)
	}
	for name, change := range map[string]func(*Limits){
		"negative FrameBytesMax":   func(l *Limits) { l.FrameBytesMax = -1 },
		"FrameBytesMax over int32": func(l *Limits) { l.FrameBytesMax = 1 << 31 },
		"tiny SendQueueBytesMax":   func(l *Limits) { l.SendQueueBytesMax = 3 },
		"huge SendQueueBytesMax":   func(l *Limits) { l.SendQueueBytesMax = 1 << 31 },
		"zero ConnectionsMax":      func(l *Limits) { l.ConnectionsMax = 0 },
		"negative IdleTimeout":     func(l *Limits) { l.IdleTimeout = -time.Second },
	} {
		limits := DefaultLimits()
		change(&limits)
		if limits.Validate() == nil {
			t.Errorf("%s: Validate accepted it", name)
		}
		if _, err := Listen("127.0.0.1:0", newAcceptor(nil), func(func()) bool { return true }, limits, nil); err == nil {
			t.Errorf("%s: Listen accepted it", name)
		}
	}
}

// rawClient dials a listener with a plain socket, to send what a Sluice
// connection never would.
func rawClient(t *testing.T, address string) stdnet.Conn {
	t.Helper()
	socket, err := stdnet.Dial("tcp", address)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { socket.Close() })
	return socket
}

func frameHeader(size uint32) []byte {
	return binary.BigEndian.AppendUint32(nil, size)
}

func TestOversizedSizePrefixClosesWithoutAllocating(t *testing.T) {
	server := startNode(t)
	limits := DefaultLimits()
	limits.FrameBytesMax = 1 << 10
	a := newAcceptor(nil)
	l := listen(t, server, a, limits)

	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	socket := rawClient(t, l.Addr())
	if _, err := socket.Write(frameHeader(1 << 31)); err != nil { // 2 GiB
		t.Fatalf("write: %v", err)
	}
	s := a.next(t)
	err := s.recorder.waitForClosed(t)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("Closed(%v), want ErrFrameTooLarge", err)
	}
	// The whole test allocates kilobytes; a 2 GiB frame would show.
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 16<<20 {
		t.Fatalf("%d bytes allocated while refusing the frame", allocated)
	}
	// The peer sees the connection end.
	if _, err := io.ReadAll(socket); err != nil && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("peer read: %v", err)
	}
}

func TestFrameBytesMaxIsInclusive(t *testing.T) {
	server := startNode(t)
	limits := DefaultLimits()
	limits.FrameBytesMax = 1000
	a := newAcceptor(nil)
	l := listen(t, server, a, limits)
	socket := rawClient(t, l.Addr())
	largest := patterned(1, 1000)
	message := append(frameHeader(1000), largest...)
	message = append(message, frameHeader(1001)...)
	if _, err := socket.Write(message); err != nil {
		t.Fatalf("write: %v", err)
	}
	s := a.next(t)
	frames, closes := s.recorder.waitFor(t, "Closed", func(_ [][]byte, closes []error) bool { return len(closes) > 0 })
	sameFrames(t, "received", frames, [][]byte{largest})
	if !errors.Is(closes[0], ErrFrameTooLarge) {
		t.Fatalf("Closed(%v), want ErrFrameTooLarge", closes[0])
	}
}

func TestPeerVanishingMidFrameIsUnexpectedEOF(t *testing.T) {
	server := startNode(t)
	a := newAcceptor(nil)
	l := listen(t, server, a, DefaultLimits())
	socket := rawClient(t, l.Addr())
	socket.Write(append(frameHeader(100), patterned(1, 40)...))
	socket.Close()
	s := a.next(t)
	if err := s.recorder.waitForClosed(t); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Closed(%v), want io.ErrUnexpectedEOF", err)
	}
}

func TestDialRefusedReportsClosed(t *testing.T) {
	client := startNode(t)
	// A port that was free a moment ago and has no listener now.
	probe, err := stdnet.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	address := probe.Addr().String()
	probe.Close()

	d := newTestDialer(t, client, DefaultLimits())
	conn, r := dial(t, client, d, address)
	if err := r.waitForClosed(t); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("Closed(%v), want ECONNREFUSED", err)
	}
	client.do(t, func() {
		if conn.Send([]byte("x")) {
			t.Error("Send on a refused connection reported true")
		}
		if conn.RemoteAddr() != address {
			t.Errorf("RemoteAddr %q, want %q", conn.RemoteAddr(), address)
		}
	})
}

func TestDialAfterCloseReportsErrClosed(t *testing.T) {
	client := startNode(t)
	d := NewDialer(client.loop.Post, DefaultLimits(), nil)
	d.Close()
	_, r := dial(t, client, d, "127.0.0.1:1")
	if err := r.waitForClosed(t); !errors.Is(err, ErrClosed) {
		t.Fatalf("Closed(%v), want ErrClosed", err)
	}
}

func TestSendOfAFrameLargerThanTheQueueCloses(t *testing.T) {
	server, client := startNode(t), startNode(t)
	a := newAcceptor(nil)
	l := listen(t, server, a, DefaultLimits())
	limits := DefaultLimits()
	limits.SendQueueBytesMax = 1 << 16
	d := newTestDialer(t, client, limits)
	conn, r := dial(t, client, d, l.Addr())
	client.do(t, func() {
		if !conn.Send(make([]byte, 1<<16-frameHeaderBytes)) {
			t.Error("a frame that fits the queue exactly was refused")
		}
	})
	s := a.next(t)
	s.recorder.waitForFrames(t, 1)
	client.do(t, func() {
		if conn.Send(make([]byte, 1<<16)) {
			t.Error("Send of a frame larger than the queue reported true")
		}
		if conn.Send([]byte("after")) {
			t.Error("Send after the overflow reported true")
		}
	})
	if err := r.waitForClosed(t); !errors.Is(err, ErrSendQueueFull) {
		t.Fatalf("Closed(%v), want ErrSendQueueFull", err)
	}
	if err := s.recorder.waitForClosed(t); err == nil {
		t.Fatal("server Closed(nil)")
	}
}

// A peer that never reads: the kernel's buffers fill, the writer blocks,
// and the queue passes its bound.
func TestSendQueueOverflowOnAStalledPeerCloses(t *testing.T) {
	client := startNode(t)
	stalled, err := stdnet.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	acceptedSocket := make(chan stdnet.Conn, 1)
	go func() {
		socket, err := stalled.Accept()
		if err == nil {
			acceptedSocket <- socket // held open, never read
		}
		close(acceptedSocket)
	}()
	limits := DefaultLimits()
	limits.SendQueueBytesMax = 1 << 20
	d := newTestDialer(t, client, limits)
	conn, r := dial(t, client, d, stalled.Addr().String())
	if socket, ok := <-acceptedSocket; ok {
		defer socket.Close()
	}

	// 512 MiB is far beyond what the kernel buffers on both ends hold.
	const frameBytes, framesMax = 64 << 10, 8192
	frame := make([]byte, frameBytes) // shared: nobody writes to it
	refusedAt := -1
	for i := 0; i < framesMax && refusedAt < 0; i += 64 {
		client.do(t, func() {
			for j := i; j < i+64; j++ {
				if !conn.Send(frame) {
					refusedAt = j
					return
				}
			}
		})
	}
	if refusedAt < 0 {
		t.Fatalf("%d frames of %d bytes to a peer that never reads were all accepted", framesMax, frameBytes)
	}
	if err := r.waitForClosed(t); !errors.Is(err, ErrSendQueueFull) {
		t.Fatalf("Closed(%v), want ErrSendQueueFull", err)
	}
}

func TestConnectionsMaxRefusesTheExtraConnection(t *testing.T) {
	server, client := startNode(t), startNode(t)
	limits := DefaultLimits()
	limits.ConnectionsMax = 2
	a := newAcceptor(nil)
	l := listen(t, server, a, limits)
	d := newTestDialer(t, client, DefaultLimits())

	first, _ := dial(t, client, d, l.Addr())
	a.next(t)
	_, secondSide := dial(t, client, d, l.Addr())
	a.next(t)
	_, extraSide := dial(t, client, d, l.Addr())
	if err := extraSide.waitForClosed(t); err == nil {
		t.Fatal("the extra connection Closed(nil)")
	}
	if len(a.accepted) != 0 {
		t.Fatal("the acceptor saw the connection beyond ConnectionsMax")
	}
	if _, closes := secondSide.snapshot(); len(closes) != 0 {
		t.Fatalf("an admitted connection closed: %v", closes)
	}

	// Closing one frees its place.
	client.do(t, first.Close)
	pollUntil(t, "the listener to count the closed connection out", func() bool { return l.registry.count() == 1 })
	dial(t, client, d, l.Addr())
	a.next(t)
}

func TestDialerConnectionsMax(t *testing.T) {
	server, client := startNode(t), startNode(t)
	l := listen(t, server, newAcceptor(nil), DefaultLimits())
	limits := DefaultLimits()
	limits.ConnectionsMax = 1
	d := newTestDialer(t, client, limits)
	dial(t, client, d, l.Addr())
	_, r := dial(t, client, d, l.Addr())
	if err := r.waitForClosed(t); !errors.Is(err, ErrTooManyConnections) {
		t.Fatalf("Closed(%v), want ErrTooManyConnections", err)
	}
}

func TestIdleConnectionIsClosed(t *testing.T) {
	server, client := startNode(t), startNode(t)
	limits := DefaultLimits()
	limits.IdleTimeout = 50 * time.Millisecond
	a := newAcceptor(nil)
	l := listen(t, server, a, limits)
	d := newTestDialer(t, client, DefaultLimits())
	_, clientSide := dial(t, client, d, l.Addr())
	s := a.next(t)
	if err := s.recorder.waitForClosed(t); !errors.Is(err, ErrIdleTimeout) {
		t.Fatalf("server Closed(%v), want ErrIdleTimeout", err)
	}
	if err := clientSide.waitForClosed(t); !errors.Is(err, io.EOF) {
		t.Fatalf("client Closed(%v), want io.EOF", err)
	}
}

// Reading and writing keep a connection alive past several idle timeouts:
// the read deadline moves with the activity. The exchange never pauses, so
// only a stall of the whole process for IdleTimeout could fail it.
func TestActiveConnectionIsNotIdle(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for a few idle timeouts")
	}
	const idleTimeout, conversation = 400 * time.Millisecond, 1600 * time.Millisecond
	server, client := startNode(t), startNode(t)
	limits := DefaultLimits()
	limits.IdleTimeout = idleTimeout
	l := listen(t, server, newAcceptor(echo), limits)
	d := newTestDialer(t, client, DefaultLimits())
	r := newRecorder()
	var conn core.Conn
	start := time.Now()
	r.onFrame = func([]byte) {
		if time.Since(start) < conversation {
			conn.Send([]byte("ping"))
		} else {
			conn.Send([]byte("last"))
		}
	}
	client.do(t, func() {
		conn = d.Dial(l.Addr(), r)
		conn.Send([]byte("ping"))
	})
	frames, closes := r.waitFor(t, "the last echo", func(frames [][]byte, closes []error) bool {
		return len(closes) > 0 || (len(frames) > 0 && string(frames[len(frames)-1]) == "last")
	})
	if len(closes) != 0 {
		t.Fatalf("an active connection closed after %d echoes: %v", len(frames), closes)
	}
}

// The idle decision itself, without waiting: a deadline that passes soon
// after activity moves; one that passes after IdleTimeout of silence ends
// the connection.
func TestIdleDecision(t *testing.T) {
	limits := DefaultLimits()
	limits.IdleTimeout = time.Hour
	c := newConnection(func(func()) bool { return true }, limits, discardLog(), newRegistry(1, DefaultLimits().QueuedBytesMax), "peer")
	local, remote := stdnet.Pipe()
	defer local.Close()
	defer remote.Close()
	c.noteActivity()
	if err := c.extendIdleDeadline(local); err != nil {
		t.Fatalf("just after activity: %v", err)
	}
	c.lastActivity.Store(int64(-2 * time.Hour)) // silent since long before born
	if err := c.extendIdleDeadline(local); !errors.Is(err, ErrIdleTimeout) {
		t.Fatalf("after two hours of silence: %v, want ErrIdleTimeout", err)
	}
}
