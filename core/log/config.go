package log

import (
	"fmt"
	"math"
	"time"
)

// Unlimited switches off a retention bound (RetentionBytes, RetentionAge),
// as -1 does for Kafka's retention.bytes and retention.ms.
const Unlimited = -1

// Config is a partition log's settings. Each field mirrors the Kafka topic
// config named in its comment and has the same default.
type Config struct {
	// SegmentBytes is segment.bytes: the active segment rolls before an
	// append would make it larger. Default 1 GiB. A leader refuses a
	// produced batch larger than this (RECORD_LIST_TOO_LARGE, as Kafka
	// does), but one appended otherwise (a follower's copy of a batch
	// written before the config shrank) still goes in, alone in a fresh
	// segment.
	SegmentBytes int64

	// SegmentAge is segment.ms: the active segment rolls before an append
	// whose records are this much newer than its first batch (record
	// time, as Kafka judges it); a segment whose first batch has no
	// timestamp rolls once it has been active this long in this process
	// (the monotonic clock). ApplyRetention rolls an active segment that
	// long active too, so that a quiet partition's records seal and may
	// be compacted. Default 7 days.
	SegmentAge time.Duration

	// SegmentJitter is segment.jitter.ms: each segment rolls up to this
	// much earlier than SegmentAge says, by an amount drawn when it is
	// created or opened (less than the smaller of the two), so that
	// partitions created together do not all roll at once. Default 0.
	SegmentJitter time.Duration

	// SegmentIndexBytes is segment.index.bytes: the active segment rolls
	// once its offset index (8 bytes an entry) or time index (12) would
	// outgrow it, as Kafka's do; at most indexEntriesMax entries either
	// way. Default 10 MiB.
	SegmentIndexBytes int64

	// RetentionBytes is retention.bytes: ApplyRetention deletes the oldest
	// segments while the log without them would still be at least this
	// big. Unlimited (-1) by default.
	RetentionBytes int64

	// RetentionAge is retention.ms: ApplyRetention deletes the oldest
	// segments whose largest record timestamp is older than this, judged
	// against Clock.Now. Default 7 days; Unlimited (-1) keeps everything.
	RetentionAge time.Duration

	// IndexIntervalBytes is index.interval.bytes: roughly how many bytes of
	// batches lie between two offset index entries. Default 4096; 0 indexes
	// every batch.
	IndexIntervalBytes int

	// The settings of log compaction (Compact, compaction.go); they matter
	// only to a log whose owner calls Compact, as a replica does for
	// cleanup.policy=compact.

	// Compacted says the owner compacts this log (cleanup.policy holds
	// compact), so its segments may hold offset gaps: every batch read
	// from them has its base offset confirmed by a second read (see
	// batchReader), as continuity cannot vouch for it there.
	Compacted bool

	// DeleteRetention is delete.retention.ms: a tombstone (a record with a
	// null value) stays at least this long after compaction first reaches
	// it, judged by its segment's largest timestamp, so that consumers
	// reading from behind still see the delete. Default 1 day.
	DeleteRetention time.Duration

	// MinCompactionLag is min.compaction.lag.ms: a segment holding any
	// record younger than this (by timestamp, against Clock.Now) is not
	// compacted yet. Default 0.
	MinCompactionLag time.Duration

	// MinCleanableDirtyRatio is min.cleanable.dirty.ratio: a compaction
	// pass starts only when the part of the log not yet compacted is at
	// least this share of the log's compactable bytes. Default 0.5.
	MinCleanableDirtyRatio float64

	// MaxCompactionLag is max.compaction.lag.ms: a pass starts whatever
	// MinCleanableDirtyRatio says once a sealed segment not yet compacted
	// has a first batch older than this (by timestamp, against
	// Clock.Now), and a compacted log's active segment rolls at least
	// this often (record time, as SegmentAge), as Kafka's
	// LogCleanerManager and LogConfig.maxSegmentMs do. Default unlimited.
	MaxCompactionLag time.Duration
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		SegmentBytes:       1 << 30,
		SegmentAge:         7 * 24 * time.Hour,
		RetentionBytes:     Unlimited,
		RetentionAge:       7 * 24 * time.Hour,
		IndexIntervalBytes: 4096,

		SegmentIndexBytes: 10 << 20,

		DeleteRetention:        24 * time.Hour,
		MinCompactionLag:       0,
		MinCleanableDirtyRatio: 0.5,
		MaxCompactionLag:       math.MaxInt64,
	}
}

// rollAge is how much record time a segment may span: SegmentAge, or
// MaxCompactionLag where that is shorter on a compacted log.
func (c Config) rollAge() time.Duration {
	if c.Compacted {
		return min(c.SegmentAge, c.MaxCompactionLag)
	}
	return c.SegmentAge
}

// Entry sizes of the offset and time indexes on disk, which
// SegmentIndexBytes is counted in.
const (
	offsetIndexEntryBytes = 8
	timeIndexEntryBytes   = 12
)

// indexesFull reports whether either index of a segment with the given
// entries has reached what SegmentIndexBytes allows.
func (c Config) indexesFull(offsetEntries, timeEntries int) bool {
	return int64(offsetEntries) >= min(c.SegmentIndexBytes/offsetIndexEntryBytes, indexEntriesMax) ||
		int64(timeEntries) >= min(c.SegmentIndexBytes/timeIndexEntryBytes, indexEntriesMax)
}

// Validate reports the first setting out of its range.
func (c Config) Validate() error {
	switch {
	case c.SegmentBytes < SegmentBytesMin || c.SegmentBytes > SegmentBytesMax:
		return fmt.Errorf("%w: SegmentBytes %d is outside [%d, %d]", ErrConfig, c.SegmentBytes, SegmentBytesMin, SegmentBytesMax)
	case c.SegmentAge <= 0:
		return fmt.Errorf("%w: SegmentAge %v must be positive", ErrConfig, c.SegmentAge)
	case c.SegmentJitter < 0:
		return fmt.Errorf("%w: SegmentJitter %v must be at least 0", ErrConfig, c.SegmentJitter)
	case c.SegmentIndexBytes < SegmentIndexBytesMin:
		return fmt.Errorf("%w: SegmentIndexBytes %d must be at least %d", ErrConfig, c.SegmentIndexBytes, SegmentIndexBytesMin)
	case c.MaxCompactionLag <= 0:
		return fmt.Errorf("%w: MaxCompactionLag %v must be positive", ErrConfig, c.MaxCompactionLag)
	case c.RetentionBytes < Unlimited:
		return fmt.Errorf("%w: RetentionBytes %d must be -1 (unlimited) or at least 0", ErrConfig, c.RetentionBytes)
	case c.RetentionAge < Unlimited:
		return fmt.Errorf("%w: RetentionAge %v must be -1 (unlimited) or at least 0", ErrConfig, c.RetentionAge)
	case c.IndexIntervalBytes < 0 || c.IndexIntervalBytes > IndexIntervalBytesMax:
		return fmt.Errorf("%w: IndexIntervalBytes %d is outside [0, %d]", ErrConfig, c.IndexIntervalBytes, IndexIntervalBytesMax)
	case c.DeleteRetention < 0:
		return fmt.Errorf("%w: DeleteRetention %v must be at least 0", ErrConfig, c.DeleteRetention)
	case c.MinCompactionLag < 0:
		return fmt.Errorf("%w: MinCompactionLag %v must be at least 0", ErrConfig, c.MinCompactionLag)
	case !(c.MinCleanableDirtyRatio >= 0 && c.MinCleanableDirtyRatio <= 1):
		return fmt.Errorf("%w: MinCleanableDirtyRatio %v is outside [0, 1]", ErrConfig, c.MinCleanableDirtyRatio)
	}
	return nil
}
