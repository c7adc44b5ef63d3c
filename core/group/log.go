package group

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/core/batch"
)

// Log is where the coordinator keeps what it must not forget: the
// partitions of __consumer_offsets that this node leads. The broker
// implements it over its replicas; tests implement it over a slice.
type Log interface {
	// Append writes records to partition as one batch, as its leader.
	// It returns an error at once when the partition refuses them (this
	// node does not lead it, the batch is too large, the in-sync replicas
	// are too few). Otherwise done runs exactly once, and never before
	// Append returns: with nil once the records are committed — below the
	// high watermark, so on every in-sync replica and, under the durable
	// default, fsynced there — or with an error once they cannot be
	// (leadership was lost).
	Append(partition int32, records []batch.Record, done func(err error)) error

	// Read returns whole batches of partition from offset (from the log
	// start when offset is below it) that lie below the high watermark:
	// about maxBytes, but at least one batch when there is one. Errors are
	// Kafka errors (NOT_LEADER_OR_FOLLOWER when this node no longer leads).
	Read(partition int32, offset int64, maxBytes int) (ReadResult, error)
}

// ReadResult is one Read: the batches and where the partition's log
// stands.
type ReadResult struct {
	Batches        []byte
	LogStartOffset int64
	HighWatermark  int64
	LogEndOffset   int64
}

// kafkaCode is the Kafka error code of err: its own code when it is a
// Kafka error, UNKNOWN_SERVER_ERROR otherwise.
func kafkaCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}

// commitError translates why an offset commit's write failed into what
// the committing client should hear, as Kafka's
// GroupMetadataManager.maybeConvertOffsetCommitError does: the partition
// moved (NOT_COORDINATOR: find the new coordinator), it cannot take writes
// now (COORDINATOR_NOT_AVAILABLE: retry), or the commit is too big.
func commitError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.NotEnoughReplicas),
		errors.Is(err, kerr.NotEnoughReplicasAfterAppend):
		return kerr.CoordinatorNotAvailable
	case errors.Is(err, kerr.NotLeaderForPartition), errors.Is(err, kerr.KafkaStorageError),
		errors.Is(err, kerr.NotCoordinator):
		return kerr.NotCoordinator
	case errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge),
		errors.Is(err, kerr.InvalidFetchSize):
		return kerr.InvalidCommitOffsetSize
	}
	return err
}

// storeError translates why writing a group's metadata failed, as Kafka's
// GroupMetadataManager.storeGroup does: a timeout becomes
// REBALANCE_IN_PROGRESS (the members rejoin and the next generation writes
// again), a record too large an UNKNOWN_SERVER_ERROR (nothing the client
// can do), the rest as for commits.
func storeError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, kerr.RequestTimedOut):
		return kerr.RebalanceInProgress
	case errors.Is(err, kerr.MessageTooLarge), errors.Is(err, kerr.RecordListTooLarge),
		errors.Is(err, kerr.InvalidFetchSize):
		return kerr.UnknownServerError
	}
	return commitError(err)
}
