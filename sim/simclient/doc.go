// Package simclient is a small Kafka client for the simulator: connections
// that speak the Kafka wire protocol through core/wire and kmsg, a client
// that keeps a metadata cache and routes requests to partition leaders, an
// idempotent or plain producer, a reader (a consumer by assignment), and a
// group consumer (Kafka's classic consumer group protocol, with the
// assignment computed by the group's leader, rebalancing eagerly or, with
// the cooperative-sticky assignor alone, cooperatively as KIP-429 has it). They record every operation
// in a jepsen/history Recorder, which is what the checkers in
// jepsen/checker judge.
//
// Each Client is a simulated machine of its own: a kernel.Process that can
// crash (its pending timers and deliveries die with it, and its in-flight
// operations are recorded as info at that moment) and a simnet.Endpoint it
// dials from. Everything runs on the simulator's kernel, one event at a time.
//
// # What it promises the history
//
//   - A send is one batch of one or more records (compressed when the
//     producer has a codec), recorded as one operation whose records land
//     together at consecutive offsets. It is ok only when the broker
//     answered it with an offset (its first record's); fail
//     only when every attempt was definitely refused before anything was
//     written (see outcome.go); info otherwise: a timeout, a lost
//     connection, an error that may come after the append, or a client
//     crash. A plain (non-idempotent) producer never retries a batch whose
//     outcome is unknown, since that would write it twice; an idempotent one
//     retries it with the same producer id and sequence, which the broker
//     deduplicates, and starts over with a new producer id after an info.
//   - Each history process runs one operation at a time and is never used
//     again after an info: a producer has one process per batch it keeps
//     in flight to a partition (one, or up to five when idempotent, sent
//     and retried in sequence order), a reader one process for its polls.
//   - A poll records what a fetch returned at the position it fetched from,
//     decompressed, without the records of its first batch below the
//     position (a broker serves batches whole).
//     An empty partition is recorded with its position (From) only when the
//     broker said its high watermark is exactly there: that is a claim that
//     the log ends at From, which the linearizability checker relies on.
//     Position resets after OFFSET_OUT_OF_RANGE are recorded as seeks.
//   - A group consumer records a subscribe from the start of each join to
//     the assignment SyncGroup hands out (ok with group, member,
//     generation and partitions; a static member is named by its
//     group.instance.id, which survives its restarts; a cooperative
//     member, which reads on while it rejoins, records its subscribe
//     when it applies the assignment, invoked and ok at once), then its reads of
//     committed offsets (fetch-committed), polls, and commits: ok when
//     acknowledged, fail when the coordinator refused before writing
//     (a stale generation, an unknown member, a rebalance), info when
//     the commit may have been written (a timeout, NOT_COORDINATOR,
//     COORDINATOR_NOT_AVAILABLE, a lost connection).
//
// # What it must never do
//
// Start goroutines, read the wall clock, draw randomness other than from its
// kernel.NewRand streams, let map order reach behaviour, or call a caller's
// callback inside the call that registered it. Every bound is a constant in
// limits.go.
//
// # Where to start reading
//
// Conn (conn.go) is one connection: correlation ids, in-order answers,
// timeouts. Client (client.go, metadata.go) owns the connections and the
// metadata cache. Producer (producer.go; its attempts, producer_attempts.go;
// their answers, producer_answers.go; producer_identity.go) and Reader
// (reader.go, reader_fetch.go, with fetch_requests.go) build on it, and so
// does GroupConsumer (group_consumer.go: its loop; group_membership.go:
// join, sync, heartbeat, leave; group_cooperative.go: the cooperative
// protocol's join beside the loop; group_assignors.go and group_sticky.go;
// group_offsets.go: commits; group_fetch.go); outcome.go says how each
// Kafka error is read; compression.go compresses a producer's batches and
// decompresses what consumers fetch (fetch_answers.go).
// Versions pinned to what Sluice serves are in versions.go.
package simclient
