package log

// Planted bugs (core.Canaries) that the simulator's log workload must
// catch. Production never switches them on.
const (
	// CanarySyncedBeforeDurable advances SyncedOffset when a sync is
	// issued rather than when it completes, so a crash in between loses
	// writes the log promised were durable.
	CanarySyncedBeforeDurable = "log-synced-before-sync-completes"

	// CanaryRecoverySkipsCRC makes recovery check batch framing but not
	// CRCs, so a torn write whose tail reached the disk as zeros is kept.
	CanaryRecoverySkipsCRC = "log-recovery-skips-crc"

	// CanaryCompactionSwapsUnsynced commits a compaction swap (renames the
	// new segment to .swap) as soon as the segment is written, before any
	// sync has made its bytes durable, so a crash can leave recovery
	// finishing a swap to a torn or empty file.
	CanaryCompactionSwapsUnsynced = "log-compaction-swaps-unsynced"

	// CanaryRestartReusesSegmentName restarts a log (TruncateFullyAndStartAt)
	// by creating the new segment before removing the old ones: where an
	// old segment began at the new start, the removal takes the new
	// segment's file name, and what is appended to it is gone at the next
	// crash (the bug cluster seed 155119 found).
	CanaryRestartReusesSegmentName = "log-restart-reuses-segment-name"
	// CanaryAppendBeforeTruncationDurable takes appends right after a
	// truncation, before a sync has made the truncation durable: a crash
	// can then keep the new batches and undo the cut, so recovery lines
	// the removed batches up after the new ones, a log no replica ever
	// had.
	CanaryAppendBeforeTruncationDurable = "log-append-before-truncation-durable"
	// CanaryRestartDropsOldLog restarts a log (TruncateFullyAndStartAt) by
	// removing every old segment at once, before a checkpoint records the
	// new start: a crash in between sends recovery back to the old start
	// with no segment holding it, and the log comes back empty there,
	// short of what it had synced (the bug cluster seed 2985856 found: a
	// follower in the ISR came back below the end it had reported, was
	// elected, and wrote again at offsets already acknowledged).
	CanaryRestartDropsOldLog = "log-restart-drops-old-segments"

	// CanaryCompactionTimeIndexLastOffset makes compaction name, in the
	// new segment's time index and the maximum timestamp it tracks, the
	// batch of the largest timestamp by its last offset instead of its
	// first, as Kafka's cleaner once appended the wrong offset to the
	// time index of segments it cleaned (KAFKA-4497): lookups by
	// timestamp then answer an offset inside the batch, or one beyond
	// what a consumer should start from.
	CanaryCompactionTimeIndexLastOffset = "log-compaction-time-index-last-offset"
)
