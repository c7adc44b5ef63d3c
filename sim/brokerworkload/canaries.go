package brokerworkload

import (
	"sluice/core/group"
	"sluice/core/replica"
	"sluice/sim"
)

// Canaries are the planted bugs this workload must catch, each within
// SeedsMax consecutive seeds from seed 1 (measured; see canary_test.go).
func Canaries() []sim.Canary {
	return []sim.Canary{
		{
			Name:        replica.CanaryAcksBeforeSync,
			Workload:    Name,
			Description: "the high watermark counts unsynced appends: acks=all is answered, and reads exposed, before the fsync",
			SeedsMax:    canaryAcksBeforeSyncSeedsMax,
		},
		{
			Name:        replica.CanaryDuplicateWindowIgnored,
			Workload:    Name,
			Description: "an idempotent producer's retried batch is appended again instead of answered with its original offsets",
			SeedsMax:    canaryDuplicateWindowIgnoredSeedsMax,
		},
		{
			Name:        group.CanaryStaleGenerationCommit,
			Workload:    Name,
			Description: "the group coordinator accepts an offset commit from an older generation: a stalled consumer's commit lands after the group moved on",
			SeedsMax:    canaryStaleGenerationCommitSeedsMax,
		},
		{
			Name:        group.CanaryCommitBeforeDurable,
			Workload:    Name,
			Description: "the group coordinator acknowledges an offset commit before its record is durable: a broker crash takes an acknowledged commit away",
			SeedsMax:    canaryCommitBeforeDurableSeedsMax,
		},
	}
}

// How many consecutive seeds, from seed 1, may pass before each planted
// bug must have been caught. Measured with TestCanariesAreCaught's report,
// then given a margin; the test asserts them.
const (
	canaryAcksBeforeSyncSeedsMax         = 30
	canaryDuplicateWindowIgnoredSeedsMax = 30
	canaryStaleGenerationCommitSeedsMax  = 40
	canaryCommitBeforeDurableSeedsMax    = 40
)
