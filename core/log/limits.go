package log

import (
	"math"
	"time"

	"sluice/core/batch"
)

// Every bound the log keeps, in one place. Relations between them are
// asserted in init below, so that changing one cannot silently break another.
const (
	// SegmentBytesMin and SegmentBytesMax bound Config.SegmentBytes. The
	// upper bound keeps every file position an offset index stores below
	// 2^32 even after the last append of a full segment (see appendBytesMax).
	SegmentBytesMin = 128
	SegmentBytesMax = math.MaxInt32 // Kafka's segment.bytes is an int

	// SegmentIndexBytesMin bounds Config.SegmentIndexBytes from below:
	// room for one entry of either index, so a segment takes at least one
	// batch with an index entry before its indexes count as full (Kafka's
	// floor, 4 bytes, leaves an index room for none).
	SegmentIndexBytesMin = timeIndexEntryBytes

	// appendBytesMax is the most bytes one Append or AppendReplicated may
	// carry; Kafka's message.max.bytes defaults to 1 MiB, so this is a
	// generous ceiling, not a tuning knob.
	appendBytesMax = 64 << 20

	// readBytesMax caps the bytes one Read returns, whatever maxBytes asks.
	readBytesMax = 64 << 20

	// IndexIntervalBytesMax bounds Config.IndexIntervalBytes.
	IndexIntervalBytesMax = SegmentBytesMax

	// indexEntriesMax is how many entries an offset or time index holds;
	// the active segment rolls when either is full (Kafka's
	// segment.index.bytes plays this role). It also bounds what loading an
	// index file may allocate.
	indexEntriesMax = 1 << 20

	// relativeOffsetMax is the largest offset distance from a segment's
	// base that its indexes can store; the active segment rolls before an
	// append would go beyond it, as Kafka's does.
	relativeOffsetMax = 1<<31 - 1

	// epochEntriesMax bounds the leader epoch cache. Retention trims it
	// from the front; a partition that changes leader more often than this
	// within its retention is refused new epochs rather than growing
	// without limit.
	epochEntriesMax = 1 << 16

	// checkpointBytesMax bounds the checkpoint file (header lines plus one
	// short line per epoch entry).
	checkpointBytesMax = 256 + 48*epochEntriesMax

	// readAttemptsMax is how many times a read whose bytes fail their
	// checks is repeated before the failure is believed. Bits can flip
	// between the media and memory (a bus, a controller, the simulator's
	// read corruption) while the media itself is fine; recovery must not
	// truncate synced data because of one bad read.
	readAttemptsMax = 8

	// scanChunkBytes is how much recovery reads at a time while scanning a
	// segment, so a run of small batches costs one read.
	scanChunkBytes = 1 << 20

	// segmentsMax bounds the segments one partition directory may hold.
	// With SegmentBytesMin segments it is still 128 GiB of log; beyond it
	// Open refuses the directory instead of allocating without limit.
	segmentsMax = 1 << 20

	// offsetMapBytesMax bounds the memory of a compaction pass's offset map:
	// each key's bytes plus offsetMapEntryOverheadBytes. Kafka's
	// log.cleaner.dedupe.buffer.size (128 MiB) plays this role. A pass
	// whose dirty section has more keys compacts up to where the map
	// filled, and the next pass goes on from there.
	offsetMapBytesMax           = 128 << 20
	offsetMapEntryOverheadBytes = 64

	// compactionReadBytesPerCallMax is roughly how many bytes of segments
	// one Compact call reads, so that compaction never holds the node's
	// loop for long: building a pass's offset map stops there (a pass
	// needs at least one batch), and cleaning stops after the group that
	// crosses it (a call cleans at least one group).
	compactionReadBytesPerCallMax = 256 << 20

	// recordsDecompressedBytesMax bounds the decompressed records of one
	// batch compaction looks into; a batch inflating beyond it is left as
	// it is.
	recordsDecompressedBytesMax = 4 * appendBytesMax

	// cleanedWriteChunkBytes is how much of a cleaned segment is buffered
	// before it is written.
	cleanedWriteChunkBytes = 1 << 20

	// checkpointRetryDelay is how long the log waits before it begins a
	// round again for a checkpoint a full disk refused, while appends or
	// durability waiters depend on it: often enough to resume soon after
	// space returns, rarely enough not to spin on a disk that stays full.
	checkpointRetryDelay = 200 * time.Millisecond

	// confirmReadsAgreeing is how many further reads of a base offset,
	// an epoch or a batch must agree with it (or disagree) before it is
	// believed (or refused); see rereadsAgree.
	confirmReadsAgreeing = 2

	// syncDelayBuggifyMin and syncDelayBuggifyMax bound how long the
	// BUGGIFY site log-sync-delayed defers the start of a sync round: a
	// few milliseconds, like a group commit that waits for company
	// (PostgreSQL's commit_delay), short enough that acks=all producers
	// and followers do not time out because of it alone.
	syncDelayBuggifyMin = 1 * time.Millisecond
	syncDelayBuggifyMax = 5 * time.Millisecond
)

func init() {
	// A batch is appended at a position below SegmentBytesMax (a full
	// segment rolls first), so positions and sizes fit an index's uint32.
	if SegmentBytesMax+appendBytesMax >= 1<<32 {
		panic("log: SegmentBytesMax + appendBytesMax must fit in uint32 positions")
	}
	if SegmentBytesMin < batch.HeaderSize {
		panic("log: SegmentBytesMin must hold at least one batch header")
	}
	if readBytesMax < appendBytesMax {
		panic("log: readBytesMax must fit the largest batch, or atLeastOne could not return it")
	}
	// The largest key (a batch holding one record) must fit the offset
	// map, or a pass could make no progress.
	if offsetMapBytesMax < appendBytesMax+offsetMapEntryOverheadBytes {
		panic("log: offsetMapBytesMax must hold the largest key a batch can carry")
	}
}
