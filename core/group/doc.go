// Package group is the consumer group coordinator: Kafka's classic group
// membership protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) and the
// committed offsets of every group this node coordinates (OffsetCommit,
// OffsetFetch, OffsetDelete), with DescribeGroups, ListGroups and
// DeleteGroups for administrators.
//
// A group belongs to one partition of the internal topic __consumer_offsets
// (PartitionFor: Kafka's hash of the group id), and the node leading that
// partition coordinates it. Everything the coordinator must not forget —
// committed offsets, and each generation's members and assignments — is
// written to that partition as Kafka writes it (OffsetCommitKey/Value,
// GroupMetadataKey/Value, encoded by kmsg, so Kafka's tools can read the
// topic), and an answer that promises durability is sent only once the
// write is committed. When this node becomes the partition's leader it
// replays the partition (Load) and serves its groups; when it stops
// leading it forgets them (Unload). Meanwhile their requests are answered
// COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR, and clients go and find
// the new coordinator.
//
// Committed offsets in memory follow the log: an offset change (a commit,
// a deletion, an expiry) reaches memory when its record commits, in log
// order, so what OffsetFetch answers is always what a replay of the log
// would rebuild. Group membership is live state, persisted at the points
// Kafka persists it (a completed SyncGroup, a group becoming empty, a
// static member replaced).
//
// Like the rest of core/, the coordinator is a deterministic state machine:
// it runs on the node's loop, takes time and timers from core.Clock and
// randomness (member ids) from core.Entropy, and never ranges over a map
// whose order could reach an answer. It knows nothing of the broker: it
// writes and reads through the small Log interface (log.go), and requests
// and answers are kmsg's types.
//
// Start with Coordinator (coordinator.go) and the group's states
// (state.go), then follow a rebalance: join.go, rebalance.go, sync.go,
// heartbeat.go. Offsets are in offset_commit.go and offset_fetch.go;
// storage in records.go, write.go and load.go.
package group
