// Package quorum is the metadata quorum: Raft over the metadata log, as
// KRaft runs it (KIP-595), with pre-vote (KIP-996), check-quorum and
// snapshots (KIP-630). It decides which metadata records are committed and
// hands them, in log order, to the node that applies them.
//
// The metadata log is a partition log (core/log) whose batches carry the
// leader epoch, Raft's term. Replication is by pull: followers Fetch from
// the leader, which checks each fetch position against its log
// (DivergingEpoch tells a follower where to truncate) and counts a
// follower's fetch offset, which covers only what the follower has synced,
// as its acknowledgement. A record is committed once a majority of voters
// has it synced and the leader's own epoch has a committed batch (its
// LeaderChange record, Raft §5.4.2). Elections use Vote with pre-vote first;
// BeginQuorumEpoch announces a leader, EndQuorumEpoch resigns one.
// Snapshots of the state let the log start move up; a follower that falls
// behind the start downloads one with FetchSnapshot. Every message is a
// Kafka message (kmsg), sent through core/peer.
//
// It must never act on an election before the election state is durable
// (the quorum-state file: epoch, vote, leader; Raft §5.2), never truncate
// committed records, never let the epoch or the high watermark go back,
// never deliver a record twice or out of order in one process lifetime, and
// never draw randomness or time from anywhere but its core.World. Like
// everything under core/ it runs on its node's loop only.
//
// Start reading with Quorum and Open (quorum.go), then roles.go (the roles
// and the legal moves between them); then one file per message: vote.go,
// begin_quorum_epoch.go, end_quorum_epoch.go, fetch_leader.go and
// fetch_follower.go, fetch_snapshot.go, describe_quorum.go. leader.go holds
// proposals and the leader's duties, commit.go the high watermark and
// delivery, caught_up.go when a restarted node has delivered what was
// committed before it started, election_state.go the quorum-state file, snapshots.go and
// snapshot_files.go the snapshots, log_reset.go how the log restarts at a
// downloaded snapshot. Bounds are in limits.go, planted bugs in canary.go.
// The interaction tests under testdata/ show whole scenarios as traces.
package quorum
