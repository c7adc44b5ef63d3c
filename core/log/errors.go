package log

import "errors"

// Errors the log returns. Callers map them to Kafka error codes; each is
// returned wrapped with detail, so compare with errors.Is.
var (
	// ErrOffsetOutOfRange: the offset is below StartOffset or above
	// EndOffset (OFFSET_OUT_OF_RANGE).
	ErrOffsetOutOfRange = errors.New("log: offset out of range")

	// ErrCorrupt: stored bytes failed their checks on every re-read
	// (CORRUPT_MESSAGE / KAFKA_STORAGE_ERROR). No bytes are returned with it.
	ErrCorrupt = errors.New("log: stored data is corrupt")

	// ErrInvalidBatch: an append carried bytes that are not whole, valid
	// v2 batches, or too many of them.
	ErrInvalidBatch = errors.New("log: invalid batch")

	// ErrUnexpectedOffset: a replicated append does not continue the log
	// densely from EndOffset.
	ErrUnexpectedOffset = errors.New("log: replicated batch does not start at the log end")

	// ErrEpochWentBack: an append carries a leader epoch below the latest
	// one in the log (FENCED_LEADER_EPOCH for a leader).
	ErrEpochWentBack = errors.New("log: leader epoch lower than the latest")

	// ErrEpochCacheFull: the append would start a new epoch but the leader
	// epoch cache holds epochEntriesMax entries already.
	ErrEpochCacheFull = errors.New("log: leader epoch cache is full")

	// ErrTruncationNotDurable: the log was truncated (by TruncateTo, a
	// restart or recovery) and the sync that makes the truncation durable
	// has not completed yet (see checkpoint_trust.go). An append is
	// refused then, and so is a restart that would keep records
	// (TruncateFullyAndStartAt).
	// The truncation started that sync; the caller retries later.
	ErrTruncationNotDurable = errors.New("log: truncation not yet durable; retry after the next sync")

	// ErrSwapNotFinished: a restart (TruncateFullyAndStartAt) would
	// start the log inside a segment a compaction swap has not finished
	// putting on disk, whose records below the start it could not keep
	// (see TruncateFullyAndStartAt). It started the sync round that
	// finishes the swap; the caller retries later.
	ErrSwapNotFinished = errors.New("log: a compaction swap is not finished; retry after the next sync")

	// ErrClosed: the log was closed.
	ErrClosed = errors.New("log: closed")

	// ErrHalted: a sync failed and the log halted the node; nothing more
	// may be done with this instance. Open recovers.
	ErrHalted = errors.New("log: halted after a failed sync")

	// ErrConfig: a Config field is out of range.
	ErrConfig = errors.New("log: invalid config")
)

// errBadData marks bytes read from a file that failed a check: a CRC, a
// framing rule, an offset that does not continue the previous batch. A read
// can be corrupted on its way from the media, so such failures are retried
// (see readAttemptsMax) before they are believed.
var errBadData = errors.New("log: bytes read failed their checks")
