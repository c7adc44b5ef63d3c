package simclient

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
)

// outcome is how a producer reads one attempt's result: was the batch
// written, and is it worth trying again?
type outcome uint8

const (
	// written: the broker answered with an offset.
	written outcome = iota + 1
	// notWrittenRetriable: refused before anything was written, for a
	// reason that may pass (no leader yet, a full disk, stale metadata).
	notWrittenRetriable
	// notWrittenFatal: refused before anything was written, and trying
	// again would be refused the same way (too large, invalid).
	notWrittenFatal
	// sequenceBroken: an idempotent batch refused because the broker's
	// idea of the producer's sequence differs from the producer's. Not
	// written; the producer must start over with a new producer id.
	sequenceBroken
	// unknownRetriable: it may have been written (a timeout, a lost
	// connection, leadership lost while waiting for acks). Only an
	// idempotent producer may retry, since the broker deduplicates.
	unknownRetriable
	// unknownFatal: it may have been written, and the error is not one a
	// retry cures.
	unknownFatal
)

var outcomeNames = [...]string{
	written: "written", notWrittenRetriable: "not-written-retriable", notWrittenFatal: "not-written-fatal",
	sequenceBroken: "sequence-broken", unknownRetriable: "unknown-retriable", unknownFatal: "unknown-fatal",
}

func (o outcome) String() string { return outcomeNames[o] }

// mayBeWritten reports whether the batch may be in the log.
func (o outcome) mayBeWritten() bool {
	return o == written || o == unknownRetriable || o == unknownFatal
}

// retriable reports whether the error may pass.
func (o outcome) retriable() bool { return o == notWrittenRetriable || o == unknownRetriable }

// transportOutcome reads an error from the connection layer.
func transportOutcome(err error) outcome {
	switch {
	case IsUnknownOutcome(err):
		return unknownRetriable
	case errors.Is(err, ErrUnsupportedVersion):
		return notWrittenFatal
	default: // not delivered, too many pending, unknown broker
		return notWrittenRetriable
	}
}

// produceOutcome reads a partition's error code in a Produce answer, as
// Sluice's broker (core/broker/00_produce.go) produces them. Everything the
// broker checks before appending is "not written"; what can go wrong after
// the append (the wait for acks=all) is "unknown". With acks=1 the answer
// comes straight after the append, so NOT_LEADER_OR_FOLLOWER can only mean
// the broker did not lead the partition when it tried.
func produceOutcome(code int16, acks int16) outcome {
	switch code {
	case 0:
		return written
	case kerr.UnknownTopicOrPartition.Code, kerr.LeaderNotAvailable.Code, kerr.NotEnoughReplicas.Code,
		kerr.KafkaStorageError.Code, kerr.CoordinatorLoadInProgress.Code, kerr.FencedLeaderEpoch.Code,
		kerr.UnknownLeaderEpoch.Code:
		return notWrittenRetriable
	case kerr.NotLeaderForPartition.Code:
		if acks == -1 {
			// Also what an acks=all wait ends with when the replica
			// stops leading after the append.
			return unknownRetriable
		}
		return notWrittenRetriable
	case kerr.RequestTimedOut.Code, kerr.NotEnoughReplicasAfterAppend.Code, kerr.NetworkException.Code:
		return unknownRetriable
	case kerr.OutOfOrderSequenceNumber.Code, kerr.UnknownProducerID.Code, kerr.InvalidProducerEpoch.Code,
		kerr.DuplicateSequenceNumber.Code:
		return sequenceBroken
	case kerr.MessageTooLarge.Code, kerr.InvalidRecord.Code, kerr.CorruptMessage.Code, kerr.RecordListTooLarge.Code,
		kerr.InvalidTimestamp.Code, kerr.InvalidRequiredAcks.Code, kerr.UnsupportedVersion.Code,
		kerr.UnsupportedCompressionType.Code, kerr.TransactionalIDAuthorizationFailed.Code, kerr.InvalidTxnState.Code,
		kerr.TopicAuthorizationFailed.Code, kerr.InvalidTopicException.Code:
		return notWrittenFatal
	default:
		// UNKNOWN_SERVER_ERROR and anything unexpected: no promise.
		return unknownFatal
	}
}

// metadataIsStale reports whether an error code means the client's view of
// who leads a partition is out of date.
func metadataIsStale(code int16) bool {
	switch code {
	case kerr.UnknownTopicOrPartition.Code, kerr.LeaderNotAvailable.Code, kerr.NotLeaderForPartition.Code,
		kerr.FencedLeaderEpoch.Code, kerr.UnknownLeaderEpoch.Code, kerr.KafkaStorageError.Code,
		kerr.OffsetNotAvailable.Code:
		return true
	}
	return false
}

// codeError is an error for a Kafka error code, nil for 0.
func codeError(code int16) error {
	if code == 0 {
		return nil
	}
	return kerr.ErrorForCode(code)
}

// staleMetadata reports whether err is a Kafka error that means the
// client's metadata is out of date.
func staleMetadata(err error) bool {
	var ke *kerr.Error
	return errors.As(err, &ke) && metadataIsStale(ke.Code)
}

// commitOutcome reads an OffsetCommit partition's error code, as Sluice's
// coordinator (core/group/offset_commit.go) produces them. Every check it
// makes before writing (membership, generation, the coordinator loading)
// is "not written". NOT_COORDINATOR and COORDINATOR_NOT_AVAILABLE are also
// what a write that failed or lost its partition after the append turns
// into (core/group commitError), and REQUEST_TIMED_OUT leaves the record
// to commit later, so those are "unknown".
func commitOutcome(code int16) outcome {
	switch code {
	case 0:
		return written
	case kerr.IllegalGeneration.Code, kerr.UnknownMemberID.Code, kerr.RebalanceInProgress.Code,
		kerr.FencedInstanceID.Code, kerr.CoordinatorLoadInProgress.Code:
		return notWrittenRetriable
	case kerr.InvalidGroupID.Code, kerr.InvalidCommitOffsetSize.Code, kerr.OffsetMetadataTooLarge.Code,
		kerr.UnknownTopicOrPartition.Code, kerr.GroupAuthorizationFailed.Code, kerr.TopicAuthorizationFailed.Code:
		return notWrittenFatal
	case kerr.NotCoordinator.Code, kerr.CoordinatorNotAvailable.Code, kerr.RequestTimedOut.Code:
		return unknownRetriable
	default:
		return unknownFatal
	}
}
