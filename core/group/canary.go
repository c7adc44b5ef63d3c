package group

// Canaries are bugs planted in the coordinator that only the simulator
// switches on (core.World.Canaries), to measure whether it catches them.
const (
	// CanaryStaleGenerationCommit accepts an OffsetCommit that carries a
	// generation older than the group's, member known or not: a zombie
	// consumer from before a rebalance can then overwrite the progress of
	// the partition's new owner.
	CanaryStaleGenerationCommit = "group-stale-generation-commit"

	// CanaryCommitBeforeDurable answers an OffsetCommit (and shows it to
	// OffsetFetch) as soon as its record is appended, before it is
	// committed: a crash can then lose an acknowledged commit.
	CanaryCommitBeforeDurable = "group-commit-before-durable"
	// CanaryServesWhileLoading serves a group while its offsets
	// partition is still being loaded, instead of answering
	// COORDINATOR_LOAD_IN_PROGRESS: a new coordinator answers offset
	// fetches from a half-read log, older than commits its predecessor
	// acknowledged, and joins create the group afresh.
	CanaryServesWhileLoading = "group-serves-while-loading"
	// CanaryRejoinIgnoresSubscription answers a known member's JoinGroup
	// in a stable group with the current generation even when its
	// subscription changed, instead of rebalancing: a cooperative
	// member that gave partitions up (KIP-429) rejoins to have them
	// handed to their new owner, and they are handed to nobody.
	CanaryRejoinIgnoresSubscription = "group-rejoin-ignores-subscription"
)
