package logworkload

// How many consecutive seeds, from seed 1, may pass before each planted
// bug must have been caught (TestCanariesAreCaught asserts it). Measured
// over seeds 1-5000: SyncedBeforeDurable failed 65% of seeds, the longest
// run of seeds up to a catch being 8; RecoverySkipsCRC failed 14% of seeds
// (it needs a crash that tears the header write of an unsynced append),
// the longest run being 43; CompactionSwapsUnsynced failed 8% of seeds (it
// needs a compaction seed, one in three, and a crash between a compaction
// and the next sync of the new segment), the longest run being 67. The
// bounds leave a margin of more than 2.5x.
const (
	canarySyncedBeforeDurableSeedsMax     = 25
	canaryRecoverySkipsCRCSeedsMax        = 120
	canaryCompactionSwapsUnsyncedSeedsMax = 170
)
