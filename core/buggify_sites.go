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
		BuggifyLogReadSmallChunks,
		BuggifyQuorumElectionTimeoutShortest,
		BuggifyQuorumSnapshotSmallChunks,
		BuggifyQuorumSuccessorNoDelay,
		BuggifyReplicaLagShort,
	}
}
