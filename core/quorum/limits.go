package quorum

import (
	"math"
	"time"
)

// Every bound the quorum keeps, in one place. Relations between them are
// asserted in init below.
const (
	// votersMax bounds the static voter set. KRaft clusters run 3 or 5
	// controllers; a few dozen is already far beyond any sensible quorum.
	votersMax = 31

	// observersTrackedMax bounds how many observers (brokers fetching the
	// metadata log without voting) the leader remembers for DescribeQuorum.
	observersTrackedMax = 1024

	// recordsPerProposalMax bounds one proposal: it becomes one batch.
	recordsPerProposalMax = 10_000

	// pendingProposalsMax bounds proposals appended by the leader but not
	// yet committed.
	pendingProposalsMax = 1_000

	// fetchBytesMax is the most record bytes one metadata Fetch answer
	// carries (Kafka's replica.fetch.max.bytes plays this role).
	fetchBytesMax = 1 << 20

	// fetchWaitMax caps how long the leader holds a Fetch that found
	// nothing new (KRaft's fetchMaxWaitMs). It is further capped at a
	// quarter of FetchTimeout, so a healthy long poll never looks like a
	// silent leader.
	fetchWaitMax = 500 * time.Millisecond

	// epochMax is the highest epoch a node moves to: one past it, the next
	// election's, would not fit the protocol's int32. No cluster gets
	// there by elections; only a request or answer that is not a node's
	// carries it, and one such, followed, drove the epoch past the top
	// and back to the bottom, which the epoch assertion halts on. Such a
	// request is refused as invalid, such an answer ignored.
	epochMax = math.MaxInt32 - 1

	// retryBackoff is the pause before a follower retries a failed fetch,
	// a write of the quorum-state file after a full disk, or an append the
	// log refused while a truncation was not yet durable.
	retryBackoff = 20 * time.Millisecond

	// applyReadBytes is how much of the metadata log is read at a time
	// when committed records are delivered.
	applyReadBytes = 1 << 20

	// stateFileBytesMax bounds the quorum-state file when it is read.
	stateFileBytesMax = 4 << 10

	// readAttemptsMax is how many times a read of the quorum-state file or
	// of a snapshot whose bytes fail their CRC is repeated before the
	// failure is believed: bits can flip between the media and memory.
	readAttemptsMax = 8

	// snapshotBytesMax bounds a snapshot file, which is read into memory
	// whole when it is loaded, installed or served.
	snapshotBytesMax = 64 << 20

	// snapshotRecordsPerBatch is how many records one batch of a snapshot
	// file holds.
	snapshotRecordsPerBatch = 1_000

	// snapshotChunkBytes is the most bytes one FetchSnapshot answer
	// carries (KRaft uses the fetch size).
	snapshotChunkBytes = 1 << 20

	// snapshotChunkBytesSmall is the chunk size a BUGGIFY site picks in
	// the simulator, so that downloads of small snapshots take many
	// chunks.
	snapshotChunkBytesSmall = 64

	// snapshotsKept is how many snapshot files stay on disk: the newest,
	// and one more, which a follower may still be downloading.
	snapshotsKept = 2

	// fillerOffsetsMax bounds the offsets one filler batch spans when the
	// log is restarted at a snapshot (see log_reset.go); it stays far below
	// the log's per-segment relative offset limit.
	fillerOffsetsMax = 1 << 30

	// listenersMax bounds the OnLeaderChange functions.
	listenersMax = 64
)

func init() {
	if snapshotChunkBytes > snapshotBytesMax || snapshotChunkBytesSmall > snapshotChunkBytes {
		panic("quorum: snapshot chunks must fit in a snapshot")
	}
	if snapshotsKept < 2 {
		panic("quorum: keep at least two snapshots, so a download in progress survives a new one")
	}
	if pendingProposalsMax < 1 || recordsPerProposalMax < 1 {
		panic("quorum: proposal bounds must be positive")
	}
}
