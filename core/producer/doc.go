// Package producer keeps a partition's idempotent-producer state (KIP-98):
// for each producer id, its epoch and the metadata of its last five batches,
// so that a batch retried after a lost acknowledgement is answered with its
// original offsets instead of being written twice, and a batch that skips a
// sequence number is refused.
//
// The state is derived from the log: every idempotent batch header carries
// its producer id, epoch and sequence, so replaying the log rebuilds the
// state. Snapshots (snapshot.go) only shorten that replay; the partition
// writes one when a segment rolls and replays batches after it on recovery
// or after a truncation. Because the state is derived from batch headers, it
// travels with the log to followers: a retry sent to a new leader after a
// failover is still recognized.
//
// Start with State.Check and State.Record (state.go).
package producer
