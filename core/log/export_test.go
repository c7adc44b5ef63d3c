package log

import (
	"fmt"

	"sluice/core/batch"
)

// SetCompactionBytesPerCall lowers how much one Compact call reads, so that
// tests can make a pass span many calls.
func SetCompactionBytesPerCall(l *Log, bytes int64) { l.compactionBytesPerCall = bytes }

// SyncDelayBuggifyMin and SyncDelayBuggifyMax bound the delay of the
// BUGGIFY site log-sync-delayed.
const (
	SyncDelayBuggifyMin = syncDelayBuggifyMin
	SyncDelayBuggifyMax = syncDelayBuggifyMax
)

// CheckpointWritingStart is the start offset of the checkpoint the sync
// round in flight is writing, and false when it writes none.
func CheckpointWritingStart(l *Log) (int64, bool) {
	if l.checkpointWriting == nil {
		return 0, false
	}
	return l.checkpointWriting.startOffset, true
}

// WalkedFrom is the base offsets of the batches compaction's walk of the
// segment holding from visits (segment.walkBatches).
func WalkedFrom(l *Log, from int64) ([]int64, error) {
	var bases []int64
	err := l.segments[l.segmentIndexFor(from)].walkBatches(from, func(h batch.Header, _ []byte, _ int64) (bool, error) {
		bases = append(bases, h.BaseOffset)
		return true, nil
	})
	return bases, err
}

// ForgetKnownBatches drops what the log's reads remember of the batches
// they checked (knownBatches), so that the next Read checks every batch.
func ForgetKnownBatches(l *Log) { l.known = knownBatches{} }

// UnfinishedSwaps are the offset ranges of the segments compaction swaps
// are still on their way to putting on disk.
func UnfinishedSwaps(l *Log) [][2]int64 {
	var ranges [][2]int64
	for _, s := range l.segments {
		if s.swap != nil {
			ranges = append(ranges, [2]int64{s.baseOffset, s.endOffset})
		}
	}
	return ranges
}

// Indexes are the in-memory offset and time index entries of every
// segment, by base offset, as text.
func Indexes(l *Log) map[int64]string {
	all := map[int64]string{}
	for _, s := range l.segments {
		all[s.baseOffset] = fmt.Sprintf("offsets %v times %v", s.offsets.entries, s.times.entries)
	}
	return all
}

// SegmentBases are the base offsets of the log's segments, in order.
func SegmentBases(l *Log) []int64 {
	var bases []int64
	for _, s := range l.segments[l.condemned():] {
		bases = append(bases, s.baseOffset)
	}
	return bases
}
