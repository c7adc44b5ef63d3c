// Package log is a partition's log: a segmented, append-only sequence of
// Kafka RecordBatch v2 batches in one directory, like Kafka's UnifiedLog and
// LogSegment. It owns the segment files and their offset and time indexes,
// the leader epoch cache, the checkpoint, retention, truncation, crash
// recovery, and the one durability promise the rest of Sluice builds on:
// SyncedOffset, below which every batch survives any crash.
//
// It must never touch the world except through core.World: files through
// core.FS, time through core.Clock. Like everything under core/ it starts
// no goroutines, takes no locks, and is used from its node's loop only;
// disk syncs complete later, as callbacks on that loop. It must never serve
// bytes that fail their CRC, report as durable anything a completed sync
// does not cover, or go on after a failed sync (it halts the node, which
// recovers).
//
// How callers use durability: append, call Sync, and acknowledge a write
// only once SyncedOffset is above its last offset (OnSynced reports each
// advance). Syncs are group commits: one round covers every change made
// before it began. After a truncation (TruncateTo, recovery cutting a torn
// tail, or an append refused by a full disk cutting its partial write
// back), appends fail with ErrTruncationNotDurable until the sync the
// truncation started completes, and after a restart at another start
// (TruncateFullyAndStartAt) until a checkpoint with the new start is
// durable; the caller retries. A crash brings back a prefix of some state
// the log was in since the last completed sync began, never a mix of two
// states, and never less than SyncedOffset.
//
// Compaction (cleanup.policy=compact, Compact) keeps the latest record of
// every key and removes older ones, rewriting sealed segments below the
// caller's UpTo. Offsets never change: batches keep theirs, and the log's
// offsets may skip where records or whole batches were removed; a read of
// a removed offset returns the next batch. Rewritten segments replace the
// old ones in memory at once and on disk through the sync rounds, so that
// a crash leaves either the old segments or the new one.
//
// On disk, in the partition directory:
//
//	00000000000000000000.log          batches, back to back
//	00000000000000000000.index        offset index of a sealed segment,
//	                                  then a CRC-32C of its entries
//	00000000000000000000.timeindex    time index of a sealed segment,
//	                                  then a CRC-32C of its entries
//	00000000000000000000.log.cleaned  a compacted segment being written
//	00000000000000000000.log.swap     a compacted segment being swapped in
//	log.checkpoint                    start offset, recovery point,
//	                                  cleaner offset, epochs
//
// Start reading with Log (log.go) and Open (open.go), which says how
// recovery decides what to trust; then append.go, read.go, sync.go (the
// group commit), and checkpoint_trust.go, whose comment explains why a
// truncation fences appends and what a checkpoint lets recovery trust;
// retention.go
// says why segments below the start go only once the new start is
// durable; compaction.go says what compaction keeps and
// compaction_swap.go how its segments reach the disk. segment.go and
// reader.go hold the per-file mechanics.
package log
