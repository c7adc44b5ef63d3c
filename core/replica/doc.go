// Package replica is one partition on one node: its log, its idempotent
// producer state, and its place in replication — leader or follower, the
// in-sync replicas (ISR), the high watermark, leader epochs.
//
// The high watermark is the line between what may be exposed and what may
// still vanish: consumers read only below it, and an acks=all write is
// acknowledged only once it is below it. The leader computes it as the
// smallest offset every member of the ISR holds, and only while the ISR
// has at least min.insync.replicas members. Under Sluice's durable default
// (flush.messages=1) each replica counts only what it has *synced* — the
// leader its own synced offset, a follower by fetching from an offset only
// once everything below it is synced — so everything a consumer reads or a
// producer was promised survives any crash of any minority, power loss of
// every machine included. In page-cache mode (Kafka's default) replicas
// count their log ends, which survives the crash of a process but not the
// power loss of every replica at once.
//
// Leaders and followers are decided by the metadata log; this package only
// carries the decisions out (BecomeLeader, BecomeFollower) and never talks
// to the network itself: the node moves follower fetches and their answers
// (FetchPosition, ServeFollowerFetch, HandleFetchAnswer) and ISR proposals
// (Replication) between replicas. Followers find where their logs diverge
// from a new leader's by leader epochs (KIP-101, KIP-279), never by their
// high watermark, and never cut below it.
//
// It must never expose or acknowledge a record above the high watermark,
// let the high watermark go back within one leadership, count a replica's
// unsynced records under the durable default, or change the ISR other
// than through the controller.
//
// Start with Partition (partition.go) and roles.go, then the leader:
// AppendAsLeader (leader_append.go), ServeFollowerFetch (leader_fetch.go),
// the high watermark (high_watermark.go), which a new leader holds while
// a former leader may still serve (takeover.go), and ISR changes
// (isr_changes.go); then the follower: follower_fetch.go,
// follower_append.go and follower_truncate.go. Read (read.go) serves
// consumers. topic_id_file.go ties the directory to its topic id, so that
// a topic created again under a deleted one's name never opens the deleted
// one's records. README-replication.md says how the pieces keep acknowledged
// writes, and which Kafka improvements were weighed.
package replica
