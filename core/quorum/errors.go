package quorum

import "errors"

// Errors a proposal can fail with. Compare with errors.Is.
var (
	// ErrNotLeader: this node is not the leader, or stopped being the
	// leader before the proposal committed. In the second case the records
	// were appended and may still commit under the next leader: the
	// outcome is unknown, and a caller must answer as Kafka does for a
	// timed-out request (REQUEST_TIMED_OUT), not as for a refused one.
	ErrNotLeader = errors.New("quorum: not the leader")

	// ErrTooManyProposals: pendingProposalsMax proposals are waiting to
	// commit; the quorum is not keeping up. Nothing was appended.
	ErrTooManyProposals = errors.New("quorum: too many proposals waiting to commit")

	// ErrClosed: the quorum was closed.
	ErrClosed = errors.New("quorum: closed")
)
