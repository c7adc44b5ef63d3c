package quorum

// Planted bugs (core.Canaries) that the simulator's quorum workload must
// catch. Production never switches them on.
const (
	// CanaryDoubleVote lets a voter grant its vote to a second candidate
	// in an epoch in which it already voted (Raft §5.2), so two leaders can
	// be elected in one epoch.
	CanaryDoubleVote = "quorum-double-vote"

	// CanaryCommitWithoutMajority makes the leader advance the high
	// watermark to its own synced offset, without waiting for a majority
	// of voters to have synced it (Raft §5.3).
	CanaryCommitWithoutMajority = "quorum-commit-without-majority"

	// CanaryAppendWithoutEpochCheck makes the leader serve a follower from
	// its fetch offset without checking the follower's LastFetchedEpoch,
	// so a follower whose log diverged appends the leader's records after
	// its own stale ones (Raft §5.3's consistency check, KIP-595's
	// DivergingEpoch).
	CanaryAppendWithoutEpochCheck = "quorum-append-without-epoch-check"
	// CanaryVoteBeforeDurable sends a granted vote before the
	// quorum-state file records it (Raft §5.2 asks for stable storage
	// first): a voter that crashes before the write reaches the disk
	// comes back without its vote and can grant a second one in the
	// same epoch, so two leaders can be elected in one epoch.
	CanaryVoteBeforeDurable = "quorum-vote-before-durable"
)
