package logworkload

// How many consecutive seeds, from seed 1, may pass before each planted
// bug must have been caught (TestCanariesAreCaught asserts it). Measured
// over seeds 1-5000: SyncedBeforeDurable failed 65% of seeds, the longest
// run of seeds up to a catch being 8; RecoverySkipsCRC failed 14% of seeds
// (it needs a crash that tears the header write of an unsynced append),
// the longest run being 43; CompactionSwapsUnsynced failed 8% of seeds (it
// needs a compaction seed, one in three, and a crash between a compaction
// and the next sync of the new segment), the longest run being 67;
// RestartReusesSegmentName failed 8% of seeds (a restart where a segment
// began, then an append, a sync and a crash), seeds to the first catch from
// the five starting points of the canary table being 14, 38, 6, 1 and 2.
// AppendBeforeTruncationDurable failed 0.7% of seeds (a truncation, an
// append, then a crash before the truncation's sync completes); biased
// toward frequent crashes and slow syncs, 1.8%, seeds to the first catch
// from the five starts being 17, 19, 41, 80 and 83.
// RestartDropsOldLog failed 0.9% of seeds (a restart at or beyond the end
// with everything synced, then a crash before its checkpoint); biased
// toward restarts and frequent crashes, 5.0%, the longest run being 127,
// the median and worst of the five starts 32 and 79.
// The bounds leave a margin of more than 2.5x.
const (
	canarySyncedBeforeDurableSeedsMax           = 25
	canaryRecoverySkipsCRCSeedsMax              = 120
	canaryCompactionSwapsUnsyncedSeedsMax       = 170
	canaryRestartReusesSegmentNameSeedsMax      = 100
	canaryAppendBeforeTruncationDurableSeedsMax = 250
	canaryRestartDropsOldLogSeedsMax            = 320
)
