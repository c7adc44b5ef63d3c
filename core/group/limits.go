package group

import "time"

// Limits of the coordinator. Each bounds the memory one node spends on
// groups; reaching one is answered with a Kafka error, never by dropping
// state that was already accepted.
const (
	// groupsPerNodeMax bounds the groups one node coordinates. A request
	// that would create one more (a first JoinGroup, a first commit) is
	// answered COORDINATOR_NOT_AVAILABLE, which clients retry. Groups
	// replayed from the log are always loaded, whatever their number.
	groupsPerNodeMax = 100_000

	// membersPerGroupMax bounds a group's members whatever group.max.size
	// says (its default, as in Kafka, is unlimited): a member that would
	// exceed it gets GROUP_MAX_SIZE_REACHED.
	membersPerGroupMax = 10_000

	// pendingMembersPerGroupMax bounds the member ids handed out with
	// MEMBER_ID_REQUIRED and not yet used to rejoin: each is a pending
	// join the group must wait for before it can complete a rebalance.
	pendingMembersPerGroupMax = 10_000

	// offsetsPerCommitMax bounds the partitions of one OffsetCommit, which
	// is written as one batch: a larger commit is refused with
	// INVALID_COMMIT_OFFSET_SIZE.
	offsetsPerCommitMax = 10_000

	// loadReadBytes is how much of an offsets partition one turn of the
	// loop replays while loading, so that loading a large partition never
	// stalls the node's other work.
	loadReadBytes = 1 << 20
)

// newMemberJoinTimeout is how long a new member's parked JoinGroup may
// wait for the rebalance to complete (Kafka's NewMemberJoinTimeoutMs). A
// new member cannot heartbeat while its join is parked, so its session
// timeout cannot be what removes a client that went away; this does.
const newMemberJoinTimeout = 5 * time.Minute

// sessionBuggifyDivisor is how much the BUGGIFY site group-session-short
// shortens the session a member is judged against (see
// sessionCheckTimeout): a member heartbeating every third of its session,
// as clients do by default, then misses the check unless it is early.
const sessionBuggifyDivisor = 3
