package log

import (
	"fmt"
	"log/slog"
	"sort"

	"sluice/core"
	"sluice/core/batch"
)

// Log is one partition's log: a directory of segments, the leader epoch
// cache, and the durability bookkeeping that says how much of it a crash
// cannot take away. It is used from its node's loop only.
//
// The one durability promise is SyncedOffset: every batch below it survives
// any crash. Appends, truncations and start offset changes reach the disk's
// page cache at once and become durable with the next completed sync (see
// sync.go). A caller that acknowledges a write, such as the broker
// answering an acks=all produce, must wait until SyncedOffset is above the
// write's last offset (OnSynced says when).
type Log struct {
	world core.World
	// nodeLogger is the World's logger, and logs the log's own, made from
	// it on the first line the log logs (see logger).
	nodeLogger *slog.Logger
	logs       *slog.Logger
	dir        string
	config     Config

	// segments are sorted by base offset, each starting where the previous
	// one ends; the last is the active one. There is always at least one.
	// The first ones may lie wholly below the start offset: condemned, they
	// are removed once a checkpoint with the new start is durable.
	segments []*segment

	startOffset int64
	endOffset   int64
	epochs      epochCache

	syncedOffset int64
	onSynced     []func(syncedOffset int64)
	// durableWaiters are WhenDurable calls, in round order.
	durableWaiters []durableWaiter

	// round is the sync in flight, nil when none is: roundState, which
	// every round uses in turn.
	round      *syncRound
	roundState syncRound
	// roundDelayed: a round is due but BUGGIFY deferred its start (see
	// beginRound); until its timer fires no other round begins.
	roundDelayed bool
	// checkpointRetryScheduled: a round is to begin after
	// checkpointRetryDelay because a checkpoint could not be written
	// (scheduleCheckpointRetry).
	checkpointRetryScheduled bool

	// Changes since the last sync began, besides dirty segments.
	directoryDirty bool
	// directoriesToSync are parents of directories Open created, whose new
	// entries must become durable once.
	directoriesToSync []string
	// filesToSync are synced and closed by the next round: index files
	// written when their segments sealed, and the file of a segment a
	// restart cut at its start and kept (keepCutBelow).
	filesToSync []core.File

	// checkpointDurable is the checkpoint on disk (nil when there is none),
	// and checkpointWriting the one the round in flight is writing. The
	// recovery point either may hold is what a crash could leave recovery
	// trusting (see recoveryPointHigh).
	checkpointDurable *checkpoint
	checkpointWriting *checkpoint
	// checkpointPath and checkpointTemporaryPath are the checkpoint's
	// file and the one it is written to first, "" until the first
	// checkpoint is written (checkpointPaths).
	checkpointPath          string
	checkpointTemporaryPath string

	// truncationPending: files were cut or deleted at the log's end and no
	// round begun after round truncationRound has completed yet (see
	// fenced).
	truncationPending bool
	truncationRound   uint64
	// restartedStart is the start of a restart (TruncateFullyAndStartAt)
	// that no durable checkpoint records yet, -1 when there is none.
	// Until a checkpoint says where the log starts now, a crash sends
	// recovery back to the old start, where it finds the old segments
	// wholly below the restart's start (restartLeftovers, their files
	// closed but kept) and the log as it was there: appends wait
	// (fenced), however many rounds a full disk refuses the checkpoint
	// (see recordsRestart, and checkpointBeforeRestart, the checkpoint on
	// its way to disk when the restart came); a later restart at the
	// durable start lifts it at once. The leftovers go when it lifts.
	restartedStart          int64
	checkpointBeforeRestart *checkpoint
	restartLeftovers        []restartLeftover

	// failure, once set by Close or a halt, is returned by every call.
	failure error

	syncStats SyncStats

	// reads is the buffer every read of this log reuses.
	reads readBuffer
	// known is what Read walked past last, which the next Read need not
	// check again if it finds the same bytes (see knownBatches).
	known knownBatches
	// writeScratch is where the checkpoint and index files are encoded
	// before each is written, reused: WriteAt keeps nothing it is given
	// (see scratchForWrite).
	writeScratch []byte
	// headerCopy holds a batch header while an append writes the batch
	// without it (writeHeaderLast). Reusing it is safe: WriteAt keeps
	// nothing it is given (io.WriterAt), and the log appends once at a
	// time.
	headerCopy [batch.HeaderSize]byte

	// Compaction (compaction.go). cleanerOffset: every record below it has
	// been through a finished compaction pass, so the next pass's dirty
	// section starts there. cleanerOffsetSafe is the part of that whose
	// rewritten segments are durable, which is what the checkpoint may
	// record; cleanerClaim is a finished pass's cleaner offset waiting for
	// its swaps. pass is the pass in progress, nil between passes.
	cleanerOffset     int64
	cleanerOffsetSafe int64
	cleanerClaim      *cleanerClaim
	pass              *cleanerPass
	// swaps are the compaction outputs not yet in place on disk, oldest
	// first (see compaction_swap.go); swapsCreated numbers them.
	swaps        []*segmentSwap
	swapsCreated uint64
	// compressedNoted: the log said once that, without Codecs, compaction
	// leaves compressed batches as they are.
	compressedNoted bool
	// compactionBytesPerCall is compactionReadBytesPerCallMax; tests lower
	// it to make passes span many calls.
	compactionBytesPerCall int64
	// compactionScratch is where compaction looks into one batch at a
	// time (lookInto, cleanBatch, rebuildBatch), reused batch after batch
	// rather than allocated for each.
	compactionScratch struct {
		records []batch.RawRecord
		kept    []batch.RawRecord
		section []byte
	}
}

// SyncStats counts the sync rounds of this Log since Open. Besides being
// metrics (fsyncs issued), they let a checker tell which states of the log
// a completed sync covered: round n covered what the log held when round n
// began.
type SyncStats struct {
	RoundsStarted   uint64
	RoundsCompleted uint64 // successfully; a failed round halts instead

	// CheckpointRound is the round whose checkpoint is the one on disk, 0
	// if no round of this Log wrote one. A start offset or epoch change is
	// durable once a checkpoint written by a later-begun round is.
	CheckpointRound uint64
}

// SyncStats returns the counts so far.
func (l *Log) SyncStats() SyncStats { return l.syncStats }

// StartOffset is the first offset a read may ask for (Kafka's log start
// offset). It may lie inside the first batch.
func (l *Log) StartOffset() int64 { return l.startOffset }

// DurableStartOffset is the log start no crash can take back: the one in
// the checkpoint on disk (0 with none). It trails StartOffset from a move
// until a sync round has written the checkpoint after it.
func (l *Log) DurableStartOffset() int64 {
	if l.checkpointDurable == nil {
		return 0
	}
	return l.checkpointDurable.startOffset
}

// EndOffset is the offset the next append gets (Kafka's log end offset).
func (l *Log) EndOffset() int64 { return l.endOffset }

// SyncedOffset is how far the log is durable: every batch below it
// survives any crash. It is at most EndOffset. It moves up when a sync
// completes and down when TruncateTo cuts below it.
func (l *Log) SyncedOffset() int64 { return l.syncedOffset }

// OnSynced registers f to be called on the loop each time SyncedOffset
// advances, with its new value. Calls for every registered function happen
// in registration order.
func (l *Log) OnSynced(f func(syncedOffset int64)) {
	l.onSynced = append(l.onSynced, f)
}

// LatestEpoch is the leader epoch of the last epoch cache entry, -1 when
// the cache is empty.
func (l *Log) LatestEpoch() int32 { return l.epochs.latestEpoch() }

// EpochAt is the leader epoch that wrote offset, as the epoch cache knows
// it (the epoch in force from the largest start at or below offset), and
// whether it knows.
func (l *Log) EpochAt(offset int64) (int32, bool) { return l.epochs.epochAt(offset) }

// EpochEntries returns a copy of the leader epoch cache, oldest first.
func (l *Log) EpochEntries() []EpochEntry { return l.epochs.clone() }

// EndOffsetForEpoch answers Kafka's OffsetForLeaderEpoch (KIP-101,
// KIP-279) for epoch: the largest cached epoch at or below it, and the
// start offset of the next cached epoch after that one, or EndOffset when
// it is the latest. An epoch below every cached one gets itself and the
// first cached epoch's start offset, as in Kafka since KIP-279, because
// that history has been deleted and the follower should start from the
// leader's start. Undefined (-1), unknown-newer epochs, and an empty cache
// get (-1, -1).
func (l *Log) EndOffsetForEpoch(epoch int32) (int32, int64) {
	return l.epochs.endOffsetFor(epoch, l.endOffset)
}

// Size is the total bytes of the log's segments that readers can reach,
// for metrics and retention.bytes.
func (l *Log) Size() int64 {
	total := int64(0)
	for _, s := range l.segments[l.condemned():] {
		total += s.bytes
	}
	return total
}

// SegmentCount is the number of segments readers can reach, for tests and
// metrics.
func (l *Log) SegmentCount() int { return len(l.segments) - l.condemned() }

// SetConfig changes the settings from now on, as a dynamic topic config
// change does in Kafka: a smaller SegmentBytes or SegmentAge rolls at the
// next append, new retention applies at the next ApplyRetention.
func (l *Log) SetConfig(config Config) error {
	if err := config.Validate(); err != nil {
		return err
	}
	if config.Compacted && !l.config.Compacted {
		// Compaction may now rewrite any segment but the active one;
		// those it writes are marked as it writes them.
		for _, s := range l.segments {
			s.mayHaveGaps = true
		}
	}
	l.config = config
	return nil
}

// Close releases the log's files. It does not sync: call Sync and wait for
// OnSynced first if the tail must be durable. A sync in flight still
// completes on the disk but is no longer reported.
func (l *Log) Close() error {
	if l.failure != nil {
		return nil
	}
	l.failure = ErrClosed
	var first error
	for _, s := range l.segments {
		if err := s.file.Close(); err != nil && first == nil {
			first = err
		}
	}
	for _, f := range l.filesToSync {
		f.Close()
	}
	l.filesToSync = nil
	return first
}

// logger is the log's logger: the World's, naming the log's directory.
// It is made when the log first logs a line, not at Open: the node opens
// a log for every partition it hosts, at every restart and reassignment,
// and many a log never logs (each logger made is several allocations, in
// the logger and in its handler).
func (l *Log) logger() *slog.Logger {
	if l.logs == nil {
		l.logs = l.nodeLogger.With("log", l.dir)
	}
	return l.logs
}

// scratchForWrite is writeScratch emptied, made at once big enough for a
// checkpoint with a few epochs rather than grown to it step by step.
func (l *Log) scratchForWrite() []byte {
	if l.writeScratch == nil {
		l.writeScratch = make([]byte, 0, writeScratchBytes)
	}
	return l.writeScratch[:0]
}

// writeScratchBytes is writeScratch's first capacity.
const writeScratchBytes = 512

func (l *Log) active() *segment { return l.segments[len(l.segments)-1] }

// segmentIndexFor returns the index of the segment holding offset: the last
// one whose base offset is at or below it.
func (l *Log) segmentIndexFor(offset int64) int {
	i := sort.Search(len(l.segments), func(i int) bool { return l.segments[i].baseOffset > offset })
	if i == 0 {
		panic(fmt.Sprintf("log: offset %d is below the first segment %d", offset, l.segments[0].baseOffset))
	}
	return i - 1
}

// checkInvariants panics if the log's state is impossible. It is cheap
// enough to run after every change: the per-segment walk is over segments,
// not batches.
func (l *Log) checkInvariants() {
	if len(l.segments) == 0 {
		panic("log: no segments")
	}
	if l.startOffset > l.endOffset {
		panic(fmt.Sprintf("log: start offset %d above end offset %d", l.startOffset, l.endOffset))
	}
	if l.syncedOffset > l.endOffset {
		panic(fmt.Sprintf("log: synced offset %d above end offset %d", l.syncedOffset, l.endOffset))
	}
	if first := l.segments[0]; first.baseOffset > l.startOffset {
		panic(fmt.Sprintf("log: first segment %d starts above start offset %d", first.baseOffset, l.startOffset))
	}
	for i, s := range l.segments {
		if i > 0 && s.baseOffset != l.segments[i-1].endOffset {
			panic(fmt.Sprintf("log: segment %d does not start where segment %d ends (%d)", s.baseOffset, l.segments[i-1].baseOffset, l.segments[i-1].endOffset))
		}
		if s.endOffset < s.baseOffset || (s.bytes == 0) != (s.endOffset == s.baseOffset) {
			panic(fmt.Sprintf("log: segment %d has end %d and %d bytes", s.baseOffset, s.endOffset, s.bytes))
		}
		if i < len(l.segments)-1 && (!s.sealed || s.bytes == 0) {
			panic(fmt.Sprintf("log: segment %d is not the last but is unsealed or empty", s.baseOffset))
		}
	}
	if active := l.active(); active.endOffset != l.endOffset || active.sealed {
		panic(fmt.Sprintf("log: active segment %d ends at %d (sealed %v), log end is %d", active.baseOffset, active.endOffset, active.sealed, l.endOffset))
	}
	// An epoch entry may start at the end only when the log start was
	// moved there (truncateFromStart keeps the epoch in force).
	if n := len(l.epochs.entries); n > 0 && l.epochs.entries[n-1].StartOffset > l.endOffset {
		panic(fmt.Sprintf("log: epoch entry %v starts beyond the end %d", l.epochs.entries[n-1], l.endOffset))
	}
}

// usable returns why the log may not be used, if it may not.
func (l *Log) usable() error { return l.failure }
