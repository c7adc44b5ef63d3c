package brokerworkload

import (
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
	}
}

// How many consecutive seeds, from seed 1, may pass before each planted
// bug must have been caught. Measured with TestCanariesAreCaught's report,
// then given a margin; the test asserts them.
const (
	canaryAcksBeforeSyncSeedsMax         = 30
	canaryDuplicateWindowIgnoredSeedsMax = 30
)
