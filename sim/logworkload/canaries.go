package logworkload

// How many consecutive seeds, from seed 1, may pass before each planted
// bug must have been caught (TestCanariesAreCaught asserts it). Measured
// over seeds 1-5000 (`sluice sim --workload log --canary NAME --seeds
// 1-5000 --keep-going`, each canary with its lean, on the code with the
// time-lookup and retention checks, restarts in compaction seeds and
// compression seeds): SyncedBeforeDurable failed 64.9% of seeds, the
// longest run of seeds up to a catch being 9; RecoverySkipsCRC 14.0% (it
// needs a crash that tears the header write of an unsynced append),
// longest run 39; CompactionSwapsUnsynced 8.3% (it needs a compaction
// seed, one in three, and a crash between a compaction and the next sync
// of the new segment), longest run 72; RestartReusesSegmentName 32.7% (a
// restart where a segment began, then an append, a sync and a crash),
// longest run 26; AppendBeforeTruncationDurable 4.0% (a truncation, an
// append, then a crash before the truncation's sync completes; leaned
// toward frequent crashes and slow syncs), longest run 171;
// RestartDropsOldLog 42.6% (a restart with synced batches below its
// start, then a crash before its checkpoint; leaned toward restarts and
// frequent crashes), longest run 13; CompactionTimeIndexLastOffset 18.4%
// (a compaction seed, a cleaned batch of several records holding its
// segment's largest timestamp, and a lookup by max timestamp that the
// segment answers from what it tracks), longest run 34, caught by
// time-lookup alone. The bounds leave a margin of 2.5x or more over the
// longest run (the runs before compression seeds: 9, 51, 88, 25, 180 and
// 16).
const (
	canarySyncedBeforeDurableSeedsMax           = 25
	canaryRecoverySkipsCRCSeedsMax              = 130
	canaryCompactionSwapsUnsyncedSeedsMax       = 250
	canaryRestartReusesSegmentNameSeedsMax      = 100
	canaryAppendBeforeTruncationDurableSeedsMax = 450
	canaryRestartDropsOldLogSeedsMax            = 80
	canaryCompactionTimeIndexLastOffsetSeedsMax = 100
)
