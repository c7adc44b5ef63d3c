// Package replica is one partition on one node: its log, its idempotent
// producer state, and its place in replication — leader or follower, the
// in-sync replica set, the high watermark, leader epochs.
//
// The high watermark is the line between what may be exposed and what may
// still vanish: consumers read only below it, and an acks=all write is
// acknowledged only once it is below it. Under Sluice's durable default
// (flush.messages=1) it is the smallest *synced* end offset across the ISR,
// so everything a consumer reads or a producer was promised survives any
// crash of any minority; in page-cache mode (Kafka's default) it is the
// smallest end offset, which survives the crash of a process but not the
// power loss of every replica at once.
//
// Start with Partition (partition.go), then AppendAsLeader
// (leader_append.go) and Read (read.go).
package replica
