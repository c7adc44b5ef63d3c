// Command bench-peers measures Sluice against its peers in one run on this
// machine's loopback, with matched record sizes and client settings, and
// prints one table per record size with ratios against named baselines.
// Run it with `make bench-peers` (`make bench-peers
// BENCH_PEERS_FLAGS=--quick` for a smoke test).
//
// The rows: Sluice single node, durable (fsync before every
// acknowledgement, the default) and page-cache-only (flush.messages at
// Kafka's default); Sluice 3 nodes with replication factor 3; franz-go's
// kfake in memory, with a data directory, and with synchronous writes, on
// 1 and 3 brokers; NATS JetStream with file storage, R1 with its default
// sync interval and with sync_interval: always, and a 3-node R3 cluster;
// and a raw baseline (raw_server.go) that moves the same bytes over
// loopback TCP into a file and acknowledges after a group-commit
// fdatasync, the physical limit of this machine for this job.
//
// For every system, run and record size: produce as fast as possible,
// consume back from the start what that wrote, then produce at a fixed
// rate (10,000 records/s) with a consumer following, for acknowledgement
// and end-to-end latency from the intended send time. Every phase is
// driven and measured by sluice/jepsen/bench, the same code `sluice bench`
// uses; only the Sender and Receiver differ per protocol (kgo for Sluice
// and kfake, nats.go's jetstream package, the raw client). Each server
// runs in its own process (this program re-executed in a serve-* mode, or
// the sluice binary); the load generator runs in this one. A system that
// fails prints its error under the table instead of aborting it.
//
// What it owns: its own Go module (go.mod beside this file), so that
// kfake, nats-server and nats.go never enter the main module's
// dependencies; it reaches the main module's code through a replace
// directive. Modules come from the Go module proxy at build time (the
// first run on a fresh machine may download them); nothing is downloaded
// while it runs.
//
// What it must never do: report a single system's absolute figures as a
// verdict. Figures are comparable only within one run on one machine,
// which is why every table prints ratios against peers measured alongside.
//
// Start reading with main.go (the run loop), then measure.go (the three
// phases), then systems.go (the rows and the ratios).
package main
