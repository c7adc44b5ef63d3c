// Package history is the record of what clients asked a Kafka-compatible
// system to do and what they were told, in Jepsen's shape: every operation
// appears once as an invoke and later, at most once, as a completion that is
// ok (it happened, with these results), fail (it definitely did not happen)
// or info (unknown: a timeout, a lost connection). The simulator's clients
// and the black-box harness in jepsen/ both write this format, and the
// checkers in jepsen/checker judge it.
//
// What it owns:
//   - Op and its payloads (Send, Poll, Record, Seek, Commit), with the
//     enumerations Type and Func and the TopicPartition name (op.go,
//     type.go, func.go, topic_partition.go).
//   - Recorder, which hands out indexes and timestamps and keeps Jepsen's
//     process discipline: a process runs one operation at a time and a
//     process whose operation ended in info is never used again
//     (recorder.go).
//   - Operations, which validates a history read from anywhere and pairs
//     each invoke with its completion (operations.go, validate.go).
//   - Write and Read: one JSON object per line, for results folders and
//     replays (json_lines.go).
//
// What it must never do: depend on anything but its input. No clock of its
// own (the Recorder is handed one), no randomness, no map order reaching an
// output; the simulator hashes what is built from these values.
//
// Start reading with Op (op.go), then Recorder (recorder.go).
package history
