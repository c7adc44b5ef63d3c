package checker

// Anomaly names a class of misbehaviour a checker looks for. Offsets are
// per partition; "known to hold a record" means some ok send was
// acknowledged at that offset or some poll received a record there.
// Processes are history processes, each one client running one operation
// at a time.
type Anomaly string

const (
	// LostWrite: an ok send whose value no poll ever received, although
	// some poll received a record at the send's acknowledged offset or
	// above it in the same partition, so a consumer reading in order
	// should have seen it. (Jepsen's lost-write.)
	LostWrite Anomaly = "lost-write"

	// Unseen: an ok send whose value no poll ever received and which is
	// not a lost-write (no poll reached its offset, or its offset is
	// unknown). Only a failure when Options.FinalDrain says every
	// partition was read to its end; otherwise it is informational.
	Unseen Anomaly = "unseen"

	// Duplicate: one value observed at two or more distinct positions
	// (partition and offset), counting both send acknowledgements and
	// polled records.
	Duplicate Anomaly = "duplicate"

	// InconsistentOffsets: one offset of a partition observed holding two
	// or more different values, from any combination of send
	// acknowledgements and polled records.
	InconsistentOffsets Anomaly = "inconsistent-offsets"

	// NonmonotonicSend: within one process, an acknowledged send to a
	// partition got an offset at or below the offset of the process's
	// previous acknowledged send to that partition (in the same operation
	// or an earlier one).
	NonmonotonicSend Anomaly = "nonmonotonic-send"

	// PollSkip: within one process, two consecutive polls that received
	// records from the same partition, with no assign, subscribe, crash or
	// seek of it in between, where the second poll's first record is past
	// the first poll's last record + 1 and some offset strictly between
	// the two is known to hold a record.
	PollSkip Anomaly = "poll-skip"

	// NonmonotonicPoll: as for PollSkip, but the second poll's first
	// record is at or below the first poll's last record.
	NonmonotonicPoll Anomaly = "nonmonotonic-poll"

	// InternalPollSkip: inside one poll's records for one partition, two
	// consecutive records whose offsets leave a gap in which some offset
	// is known to hold a record; or, when the poll records the position
	// it fetched from, a first record past that position while some
	// offset from the position up to the first record is known to hold a
	// record. (Records are those the client delivered to the application,
	// after it dropped anything below its position.)
	InternalPollSkip Anomaly = "internal-poll-skip"

	// InternalNonmonotonicPoll: inside one poll's records for one
	// partition, a record whose offset is at or below the previous
	// record's, or a first record below the position the poll fetched
	// from.
	InternalNonmonotonicPoll Anomaly = "internal-nonmonotonic-poll"

	// AbortedRead: a poll received a value whose send failed, that is,
	// definitely did not happen. (Jepsen's G1a, aborted read.)
	AbortedRead Anomaly = "aborted-read"

	// NonlinearizableLog: porcupine found no linearization of one
	// partition's sends and polls against a log: an ok send appends its
	// value at offset = the log's length; an info send may append at any
	// moment after its invoke, or never; a poll that received records
	// reads exactly those values at those offsets; a poll that received
	// nothing from a known position reads that the log's length is at
	// most that position. Failed operations are left out.
	NonlinearizableLog Anomaly = "nonlinearizable-log"

	// NonlinearizableCommittedOffset: porcupine found no linearization of
	// one (group, partition)'s committed offset as a register: an ok
	// commit writes its offset, an info commit may write it at any moment
	// after its invoke or never, an ok fetch-committed reads the current
	// value (OffsetUnknown while none was committed).
	NonlinearizableCommittedOffset Anomaly = "nonlinearizable-committed-offset"

	// GroupOwnership: one partition assigned to two or more different
	// members of one consumer group in the same generation, according to
	// ok subscribe completions.
	GroupOwnership Anomaly = "group-ownership"

	// StaleGenerationCommit: an ok commit carrying a generation older than
	// one its group had already completed, that is, some ok subscribe of
	// the group with a newer generation completed before the commit was
	// invoked. The coordinator then knew the newer generation, and must
	// refuse a commit from an older one (ILLEGAL_GENERATION, or
	// UNKNOWN_MEMBER_ID for a member it removed): a zombie's commit would
	// overwrite the progress of the partition's new owner. Commits without
	// a generation (zero) are not judged. The rule assumes the group is not
	// deleted and created again during the history, which restarts its
	// generations.
	StaleGenerationCommit Anomaly = "stale-generation-commit"

	// DeletedRecordsServed: an ok poll invoked after a DeleteRecords was
	// answered (Options.DeletesAnswered) returned a record of its
	// partition below the low watermark the answer gave. The answer
	// promised those records were gone for good; one read again came back
	// through a crash or a leader that had not deleted them.
	DeletedRecordsServed Anomaly = "deleted-records-served"
)

// lossConsequence reports whether an anomaly is what losing acknowledged
// writes looks like: the write is missing (lost-write, unseen), its
// offset is reused by a later write (inconsistent-offsets,
// nonmonotonic-send), an acknowledged append is not in the log
// (nonlinearizable-log), or a consumer that had read past the new end of
// a truncated log is sent back to an earlier offset by its client's
// offset-out-of-range reset (nonmonotonic-poll and its internal form). In
// a partition listed in Options.LossPermitted, or one a sender listed in
// Options.LossySenders wrote, these are reported as permitted, not as
// failures; except that a value lost there is permitted only if its own
// sender may lose it (lostStatus).
func (a Anomaly) lossConsequence() bool {
	switch a {
	case LostWrite, Unseen, InconsistentOffsets, NonmonotonicSend, NonlinearizableLog,
		NonmonotonicPoll, InternalNonmonotonicPoll:
		return true
	}
	return false
}
