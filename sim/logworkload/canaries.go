package logworkload

// How many consecutive seeds, from seed 1, may pass before each planted
// bug must have been caught (TestCanariesAreCaught asserts it). Measured
// over seeds 1-5000 (`sluice sim --workload log --canary NAME --seeds
// 1-5000 --keep-going`, on the code that keeps a restart's straddling
// segment): SyncedBeforeDurable failed 65% of seeds, the longest run of
// seeds up to a catch being 7; RecoverySkipsCRC failed 14% of seeds (it
// needs a crash that tears the header write of an unsynced append), the
// longest run being 44; CompactionSwapsUnsynced failed 7.7% of seeds (it
// needs a compaction seed, one in three, and a crash between a compaction
// and the next sync of the new segment), the longest run being 98;
// RestartReusesSegmentName failed 25% of seeds (a restart where a segment
// began, then an append, a sync and a crash), the longest run being 25.
// AppendBeforeTruncationDurable failed 1.5% of seeds (a truncation, an
// append, then a crash before the truncation's sync completes); biased
// toward frequent crashes and slow syncs, 3.6%, the longest run being 127,
// the median and worst of the canary table's five starts 15 and 78.
// RestartDropsOldLog failed 8.4% of seeds (a restart with synced batches
// below its start, then a crash before its checkpoint); biased toward
// restarts and frequent crashes, 27%, the longest run being 29, the
// median and worst of the five starts 3 and 7. (Before the model held a
// restart inside the log to what lay below its start, 1.9% and 7.9%,
// longest run 127.) The bounds leave a margin of more than 2.5x over the
// longest run.
const (
	canarySyncedBeforeDurableSeedsMax           = 25
	canaryRecoverySkipsCRCSeedsMax              = 120
	canaryCompactionSwapsUnsyncedSeedsMax       = 250
	canaryRestartReusesSegmentNameSeedsMax      = 100
	canaryAppendBeforeTruncationDurableSeedsMax = 320
	canaryRestartDropsOldLogSeedsMax            = 80
)
