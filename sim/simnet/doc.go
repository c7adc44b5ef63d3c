// Package simnet is the simulated network: it implements core.Network,
// core.Conn, core.Handler delivery and core.Acceptor dispatch for every
// simulated machine and client, on the simulator's kernel, and injects the
// network faults of DESIGN.md section 4.
//
// # The promise it keeps
//
// A connection keeps TCP's promise: the frames sent in one direction arrive
// whole, in the order sent, each once, until the connection breaks; after
// that nothing more arrives, and each end's Handler.Closed is called once
// (never for an end that called Close itself). Nothing is promised across
// connections. Send never blocks and never calls a handler; every callback
// runs later as a kernel event.
//
// # The faults it injects
//
//   - Latency: every frame (and every handshake, FIN or RST segment) takes a
//     one-way latency drawn uniformly from [LatencyMin, LatencyMax]. Frames
//     on one direction of one connection never overtake each other; frames
//     on different connections do, so delivery reorders across connections.
//   - Bandwidth: each host has one egress link; a frame occupies it for
//     len(frame)/BandwidthBytesPerSecond, so a burst queues behind itself.
//   - Cuts and partitions: Cut(from, to) stops frames from host `from` to
//     host `to`; they stay queued, in order, and move again on Heal or
//     HealLink (as TCP retransmits after an outage). Partition cuts both ways between groups;
//     a one-way cut, a bridge or an isolated leader are all built from Cut.
//   - Stall breaks: with StallBreakAfter > 0, a direction that has held an
//     undelivered frame behind a cut that long breaks its connection (TCP's
//     user timeout): queued frames are dropped and both ends are told.
//   - Dial failures: a dial to an address nobody listens on is refused after
//     a round trip; a dial whose handshake cannot cross a cut fails after
//     ConnectTimeout.
//   - Resets: ResetConnections and ResetRandomConnection break connections
//     as a middlebox RST does: frames in flight both ways are dropped and
//     both ends get Closed after a latency.
//   - Crashes: Endpoint.Crash (the owner process died) removes the host's
//     listeners, drops what its connections held, and sends each peer an RST
//     that arrives after a latency (and waits behind a cut like any segment).
//   - Overflow: a direction holding more than directionQueueBytesMax
//     undelivered bytes breaks its connection instead of growing.
//
// # How it works
//
// A connection has two ends and two directions. A direction is a queue of
// segments (data frames plus the SYN, SYN-ACK, FIN and RST control segments
// of the handshake and teardown) with exactly one kernel event pending: the
// delivery of its head, owned by the receiving end's process so that a dead
// receiver never runs it. When the head is delivered the next one is
// scheduled, which is what keeps a direction in order no matter how the
// kernel breaks ties. A cut stalls a direction: its pending event is
// cancelled and its segments wait, unlaunched, until the link heals.
//
// Everything is deterministic: connections live in a slice in creation
// order, every fault walks that slice, maps are only ever used for lookups,
// and all randomness comes from the *rand.Rand passed to New.
//
// # What it must never do
//
// Start goroutines, read the wall clock, iterate a map where the order could
// reach behaviour, call a handler from inside Send, Close, Dial or a fault
// method, or deliver anything to an end after its Closed.
//
// # Where to start reading
//
// network.go (Network, New, Endpoint) and faults.go (the continuous
// conditions), then endpoint.go (Dial, Listen, Crash), connection.go (the
// two ends and how a connection ends), direction.go (the segment queue:
// launch, stall, deliver) and fault_injection.go (Cut, Partition, HealLink,
// Heal, resets). Bounds are in limits.go, errors a handler can see in
// errors.go.
package simnet
