package group

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Config is the coordinator's settings. Field comments name the equivalent
// Kafka broker setting and give its default.
type Config struct {
	// OffsetsTopicPartitions is offsets.topic.num.partitions: how many
	// partitions __consumer_offsets is created with, and so how group ids
	// map to partitions until the topic exists (then its real partition
	// count wins: SetPartitionCount). Default 50.
	OffsetsTopicPartitions int32

	// MinSessionTimeout and MaxSessionTimeout are
	// group.min.session.timeout.ms and group.max.session.timeout.ms: a
	// JoinGroup asking for a session timeout outside them gets
	// INVALID_SESSION_TIMEOUT. Defaults 6 s and 30 min.
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration

	// InitialRebalanceDelay is group.initial.rebalance.delay.ms: the first
	// rebalance of an empty group waits this long (and again, up to the
	// rebalance timeout, each time a new member arrives meanwhile), so a
	// fleet of consumers starting together lands in one generation
	// instead of a rebalance per consumer. Default 3 s.
	InitialRebalanceDelay time.Duration

	// MaxSize is group.max.size: the most members a group may have.
	// Default unlimited (math.MaxInt32, as in Kafka); membersPerGroupMax
	// caps it regardless.
	MaxSize int

	// OffsetsRetention is offsets.retention.minutes: the committed offsets
	// of a group that has been empty this long (of a group without
	// membership: offsets this old) are deleted. Default 7 days.
	OffsetsRetention time.Duration
	// OffsetsRetentionCheckInterval is offsets.retention.check.interval.ms:
	// how often expired offsets are looked for. Default 10 min.
	OffsetsRetentionCheckInterval time.Duration

	// OffsetMetadataMaxBytes is offset.metadata.max.bytes: the longest
	// metadata string a commit may carry (OFFSET_METADATA_TOO_LARGE
	// beyond), counted despite its name as Kafka counts it, in Java
	// characters (UTF-16 code units: javaLength). Default 4096.
	OffsetMetadataMaxBytes int

	// OffsetCommitTimeout is offsets.commit.timeout.ms: how long an
	// OffsetCommit waits for its record to commit before it is answered
	// REQUEST_TIMED_OUT (the record may still commit later, and then
	// counts). Default 5 s.
	OffsetCommitTimeout time.Duration
}

// DefaultConfig returns Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		OffsetsTopicPartitions:        50,
		MinSessionTimeout:             6 * time.Second,
		MaxSessionTimeout:             30 * time.Minute,
		InitialRebalanceDelay:         3 * time.Second,
		MaxSize:                       math.MaxInt32,
		OffsetsRetention:              7 * 24 * time.Hour,
		OffsetsRetentionCheckInterval: 10 * time.Minute,
		OffsetMetadataMaxBytes:        4096,
		OffsetCommitTimeout:           5 * time.Second,
	}
}

// Validate reports the first setting that cannot work.
func (c Config) Validate() error {
	switch {
	case c.OffsetsTopicPartitions < 1:
		return fmt.Errorf("group: offsets.topic.num.partitions is %d, must be at least 1", c.OffsetsTopicPartitions)
	case c.MinSessionTimeout <= 0:
		return errors.New("group: group.min.session.timeout.ms must be positive")
	case c.MaxSessionTimeout < c.MinSessionTimeout:
		return fmt.Errorf("group: group.max.session.timeout.ms (%v) is below group.min.session.timeout.ms (%v)", c.MaxSessionTimeout, c.MinSessionTimeout)
	case c.MaxSessionTimeout > math.MaxInt32*time.Millisecond:
		return errors.New("group: group.max.session.timeout.ms does not fit Kafka's 32-bit milliseconds")
	case c.InitialRebalanceDelay < 0:
		return errors.New("group: group.initial.rebalance.delay.ms must not be negative")
	case c.MaxSize < 1:
		return fmt.Errorf("group: group.max.size is %d, must be at least 1", c.MaxSize)
	case c.OffsetsRetention <= 0:
		return errors.New("group: offsets.retention.minutes must be positive")
	case c.OffsetsRetentionCheckInterval <= 0:
		return errors.New("group: offsets.retention.check.interval.ms must be positive")
	case c.OffsetMetadataMaxBytes < 0:
		return errors.New("group: offset.metadata.max.bytes must not be negative")
	case c.OffsetCommitTimeout <= 0:
		return errors.New("group: offsets.commit.timeout.ms must be positive")
	}
	return nil
}

// maxMembers is the group size limit in force: group.max.size, capped by
// membersPerGroupMax.
func (c Config) maxMembers() int { return min(c.MaxSize, membersPerGroupMax) }
