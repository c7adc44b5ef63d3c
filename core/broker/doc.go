// Package broker is one Sluice node's request handling: it takes Kafka
// requests off client connections, dispatches each to its handler (one file
// per API key, named after it: 00_produce.go, 01_fetch.go, ...), and answers
// in request order. It owns the node's partitions, applies the metadata log
// to them, and runs the controller's single-node path.
//
// It is a deterministic state machine like the rest of core/: every entry
// point (Accept, a frame arriving, a timer, a sync completing) runs on the
// node's event loop, and a request can be answered later from another event
// (a produce waiting for its fsync, a fetch waiting for data).
//
// To follow a produce from socket to fsync to acknowledgement, read
// client.go (Frame: decode, order, dispatch), 00_produce.go (validate and
// append), partition.go (the log, the idempotence check, the high
// watermark), then core/log for the bytes on disk.
package broker
