package core

// The BUGGIFY sites in core, each named here so coverage reports can say
// which ones a sweep never reached. A site does something legal but
// unusual, only when the simulator switches it on (World.Buggify is nil
// in production); none sits inside a per-record loop.
const (
	// BuggifyQuorumElectionTimeoutShortest draws the shortest election
	// timeout of the range, so voters time out together (core/quorum).
	BuggifyQuorumElectionTimeoutShortest = "quorum-election-timeout-shortest"
	// BuggifyQuorumSuccessorNoDelay makes every successor of a resigning
	// leader campaign at once (core/quorum).
	BuggifyQuorumSuccessorNoDelay = "quorum-successor-no-delay"
	// BuggifyQuorumSnapshotSmallChunks serves a snapshot in small chunks,
	// many FetchSnapshot round trips (core/quorum).
	BuggifyQuorumSnapshotSmallChunks = "quorum-snapshot-small-chunks"
	// BuggifyBrokerFetchWaitShort answers a waiting (long-poll) Fetch,
	// a consumer's or a follower's, after a random fraction of its max
	// wait instead of the whole of it (core/broker).
	BuggifyBrokerFetchWaitShort = "broker-fetch-wait-short"
	// BuggifyControllerLeaderNotPreferred elects a random one of the ISR
	// members that may lead, instead of the first in replica order
	// (core/controller).
	BuggifyControllerLeaderNotPreferred = "controller-leader-not-preferred"
	// BuggifyGroupSessionShort judges a group member's liveness against a
	// third of its session.timeout.ms, so members expire and groups
	// rebalance far more often (core/group).
	BuggifyGroupSessionShort = "group-session-short"
	// BuggifyLogSyncDelayed defers the start of a group-commit sync round
	// by a few milliseconds, so more appends wait behind one fsync and
	// acknowledgements come later; nothing counts as durable before the
	// round completes (core/log).
	BuggifyLogSyncDelayed = "log-sync-delayed"
	// BuggifyLogReadSmallChunks reads a segment a batch at a time, so a
	// fetch answer is assembled from many reads (core/log).
	BuggifyLogReadSmallChunks = "log-read-small-chunks"
	// BuggifyReplicaLagShort judges a follower's lag against a tenth of
	// replica.lag.time.max.ms, so ISRs shrink and grow far more often
	// (core/replica).
	BuggifyReplicaLagShort = "replica-lag-short"
)

// BuggifySites lists every site, sorted.
func BuggifySites() []string {
	return []string{
		BuggifyBrokerFetchWaitShort,
		BuggifyControllerLeaderNotPreferred,
		BuggifyGroupSessionShort,
		BuggifyLogReadSmallChunks,
		BuggifyLogSyncDelayed,
		BuggifyQuorumElectionTimeoutShortest,
		BuggifyQuorumSnapshotSmallChunks,
		BuggifyQuorumSuccessorNoDelay,
		BuggifyReplicaLagShort,
	}
}
