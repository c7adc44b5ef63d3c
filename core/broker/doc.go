// Package broker is one Sluice node's request handling: it takes Kafka
// requests off client connections, dispatches each to its handler (one file
// per API key, named after it: 00_produce.go, 01_fetch.go, ...), and answers
// in request order. It owns the node's partitions, its member of the
// metadata quorum (core/quorum) and its controller (core/controller),
// applies the committed metadata log to them, registers and heartbeats to
// the active controller, and forwards admin requests to it. A single node
// is the same code with one voter: see cluster.go for how the pieces fit.
//
// It is a deterministic state machine like the rest of core/: every entry
// point (Accept, a frame arriving, a timer, a sync completing) runs on the
// node's event loop, and a request can be answered later from another event
// (a produce waiting for its fsync, a fetch waiting for data).
//
// To follow a produce from socket to fsync to acknowledgement, read
// prepare.go (decode and batch checks, which production runs on the
// connection's goroutine: PrepareFrame is the one method called off the
// loop, and is pure), client.go (Frame: order, dispatch), 00_produce.go
// (validate and append), core/replica (the log, the idempotence check, the high
// watermark), then core/log for the bytes on disk. Replication across
// nodes starts at replication.go: the roles the metadata gives each
// partition (partitions.go), the follower's fetches (replica_fetcher.go),
// the leader's answers (follower_fetch.go), and ISR changes sent to the
// controller (alter_partition_sender.go). Reads that claim to be the
// latest are served only on the controller lease (lifecycle.go), and a new
// leader exposes nothing new while a leader deposed without fencing may
// still serve on its own (former_leaders.go, core/replica takeover.go).
package broker
