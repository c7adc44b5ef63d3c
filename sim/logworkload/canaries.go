package logworkload

// How many consecutive seeds, from seed 1, may pass before each planted
// bug must have been caught (TestCanariesAreCaught asserts it). Measured
// over seeds 1-5000 (`sluice sim --workload log --canary NAME --seeds
// 1-5000 --keep-going`, last on c0f752a): SyncedBeforeDurable failed 65%
// of seeds, the longest run of seeds up to a catch being 7;
// RecoverySkipsCRC failed 14% of seeds (it needs a crash that tears the
// header write of an unsynced append), the longest run being 41;
// CompactionSwapsUnsynced failed 7.7% of seeds (it needs a compaction
// seed, one in three, and a crash between a compaction and the next sync
// of the new segment), the longest run being 98;
// RestartReusesSegmentName failed 21% of seeds (a restart where a segment
// began, then an append, a sync and a crash), the longest run being 29.
// AppendBeforeTruncationDurable failed 1.2% of seeds (a truncation, an
// append, then a crash before the truncation's sync completes); biased
// toward frequent crashes and slow syncs, 2.2%, the longest run being 221,
// the median and worst of the five starts 37 and 146 (since a restart
// waits for a pending cut; before, 0.7% and 1.8%, worst of the five
// starts 83).
// RestartDropsOldLog failed 1.9% of seeds (a restart at or beyond the end
// with everything synced, then a crash before its checkpoint); biased
// toward restarts and frequent crashes, 7.9% once the model held every
// such restart to what was synced before it (0.9% and 5.0% before), the
// longest run being 127, the median and worst of the five starts 29 and
// 71.
// The bounds leave a margin of more than 2.5x over the longest run.
const (
	canarySyncedBeforeDurableSeedsMax           = 25
	canaryRecoverySkipsCRCSeedsMax              = 120
	canaryCompactionSwapsUnsyncedSeedsMax       = 250
	canaryRestartReusesSegmentNameSeedsMax      = 100
	canaryAppendBeforeTruncationDurableSeedsMax = 560
	canaryRestartDropsOldLogSeedsMax            = 320
)
