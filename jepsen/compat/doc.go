// Package compat runs real Kafka clients against the real Sluice binary:
// franz-go (kgo, kadm), IBM/sarama, segmentio/kafka-go, kcat (librdkafka)
// and kafkajs each create a topic, produce records of every shape and
// compression codec they support, read them back by partition and check
// every byte, the order, the partitioning and the offsets. Further tests
// kill the broker mid-stream under an idempotent producer, and feed it
// hand-built bad frames.
//
// What it owns:
//   - The process harness (binary.go, broker.go): BuildBinary builds
//     ./cmd/sluice once per test process (or takes SLUICE_BINARY);
//     StartBroker runs it on a free loopback port with a fresh data
//     directory, waits until a Metadata request succeeds, and stops it
//     when the test ends; Kill, Restart and Stop drive crash tests. The
//     Jepsen harness reuses it to run brokers under faults.
//   - A raw request round trip over TCP (wire.go), for the readiness
//     probe and for tests that must send what no client would.
//   - The tests (*_test.go): one file per client (franz_go, sarama,
//     kafka_go, kcat, kafkajs with js/roundtrip.js), durability under
//     kill -9, hand-built bad input, and the client matrix TestMain
//     prints at the end (matrix_test.go).
//
// What it must never do: reach into core/ or any broker internals. It is
// a client; everything it knows it learns over the wire or from the
// binary's exit status and log. Tests never sleep to synchronize: they
// poll with a deadline, or wait for the event they need.
//
// kcat and kafkajs are outside programs. Without them their tests skip,
// saying how to install them, unless SLUICE_REQUIRE_CLIENTS=1 (set by
// .ci/run after installing them), in which case a missing one fails.
//
// Start reading with broker.go, then roundtrip_test.go (the records every
// client sends and the checks they must pass), then any client's file.
package compat
