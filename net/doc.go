// Package net is the real network: core.Network and core.Conn over TCP, with
// Kafka's framing (each message is a 4-byte big-endian size followed by that
// many bytes). It owns the client listener (Listen) and outbound links
// (NewDialer, which implements core.Network), and keeps the promise of
// core/network.go that sim/simnet keeps in the simulator: frames arrive
// whole, in order, once, until the connection breaks; Handler.Closed is
// called once, and never for an end its owner closed; Send never blocks.
//
// # How it works
//
// Every connection has a reader goroutine and a writer goroutine. The reader
// reads size and frame through a bounded bufio.Reader, allocates each frame
// exactly (after checking the size against Limits.FrameBytesMax, so a hostile
// size prefix never allocates), and posts it to the node's loop. The writer
// takes every frame Send has queued and writes them, with their size
// prefixes, in one writev (net.Buffers). Handlers run only on the loop: the
// goroutines never call them, they post functions that do. The one thing a
// reader runs besides reading is a listener's FramePreparer (prepare.go): a
// pure function of the frame (the broker decodes the request and checks its
// record batches' CRCs there), so the loop gets a request ready to act on.
//
// The reader is the only goroutine that posts Closed, and it does so after
// its last frame, so nothing can arrive after Closed. Whoever notices the end
// first (a failed read or write, an idle timeout, an oversized frame, a full
// send queue, the owner's Close) records the reason and closes the socket;
// that wakes the other goroutine, and the reader reports the first reason.
//
// # Limits
//
// Limits holds every bound a deployment may set (frame size, send queue,
// connection count, idle timeout), with Kafka's settings named beside them;
// limits.go also holds the package's fixed bounds.
//
// # What it must never do
//
// Call a handler or the acceptor off the loop; block in a Conn method (they
// run on the loop); allocate a frame before checking its size; leave a
// goroutine running after Listener.Close or Dialer.Close returns. Those two
// wait for this package's goroutines, which may be waiting for room in the
// loop's inbox, so they must not be called on the loop: stop the loop first
// or call them from another goroutine.
//
// # Where to start reading
//
// listener.go (Listen, the accept goroutine) and dialer.go (Dial), then
// connection.go (the Conn methods and how a connection ends), reader.go and
// writer.go (the two goroutines), delivery.go (what the loop does with what
// the reader posts, including holding frames while receiving is paused),
// prepare.go (frames prepared off the loop) and registry.go (the live
// connections of a listener or dialer).
package net
