// Package bench is the measuring half of Sluice's load generator: an
// HDR-style latency histogram and the code that drives a system under test
// at a fixed rate or as fast as it goes, and measures throughput and
// latency the same way whatever the system is. `sluice bench` uses it
// against Kafka-compatible brokers; the peers harness (cmd/bench-peers, a
// separate module) uses it against Sluice, kfake, NATS JetStream and a
// raw TCP-to-file baseline, so every row of its table is measured by one
// piece of code.
//
// What it owns:
//   - Histogram (histogram.go): log-linear buckets, 128 per power of two,
//     in fixed memory (about 35 KB), mergeable, with a stated precision:
//     a reported percentile is never below the true one and at most
//     RelativeErrorMax (0.78%) above it. Recorder and LatencySummary
//     (summary.go) wrap it for concurrent callbacks and for reports.
//   - The run drivers: RunProduce (produce.go), RunConsume (consume.go)
//     and RunEndToEnd (endtoend.go), over two small interfaces, Sender
//     and Receiver, that each system implements. A run has a warm-up,
//     excluded from every figure, then a measured window. At a fixed rate
//     each producer follows a schedule and latency counts from a record's
//     intended send time, not from when it was actually sent: a system
//     that stalls is charged for every record it delayed (coordinated
//     omission corrected). Every value starts with a stamp (payload.go):
//     the intended send time and the run's nonce, which is how a consumer
//     in the same process measures end-to-end latency.
//   - The Kafka implementation of Sender and Receiver on franz-go, and
//     topic creation (kafka.go).
//
// What it must never do: assert or judge speed. It measures and reports;
// comparisons are ratios the harness prints against peers measured in the
// same run. It never reaches into Sluice's internals: it is a client.
//
// Start reading with RunProduce (produce.go), then Histogram.
package bench
