package checker

import "sluice/jepsen/history"

// checker is one check: the anomaly classes it reports and how it finds
// them in an analysis.
type checker struct {
	anomalies []Anomaly
	run       func(*analysis) ([]Finding, []Inconclusive)
}

// only adapts a check that is never inconclusive.
func only(find func(*analysis) []Finding) func(*analysis) ([]Finding, []Inconclusive) {
	return func(a *analysis) ([]Finding, []Inconclusive) { return find(a), nil }
}

var (
	lostWriteChecker           = checker{[]Anomaly{LostWrite, Unseen}, only((*analysis).lostWrites)}
	duplicateChecker           = checker{[]Anomaly{Duplicate}, only((*analysis).duplicates)}
	inconsistentOffsetsChecker = checker{[]Anomaly{InconsistentOffsets}, only((*analysis).inconsistentOffsets)}
	nonmonotonicSendChecker    = checker{[]Anomaly{NonmonotonicSend}, only((*analysis).nonmonotonicSends)}
	pollOrderChecker           = checker{[]Anomaly{PollSkip, NonmonotonicPoll}, only((*analysis).pollOrder)}
	internalPollOrderChecker   = checker{[]Anomaly{InternalPollSkip, InternalNonmonotonicPoll}, only((*analysis).internalPollOrder)}
	abortedReadChecker         = checker{[]Anomaly{AbortedRead}, only((*analysis).abortedReads)}
	groupOwnershipChecker      = checker{[]Anomaly{GroupOwnership}, only((*analysis).groupOwnership)}
	staleGenerationChecker     = checker{[]Anomaly{StaleGenerationCommit}, only((*analysis).staleGenerationCommits)}
	deletedRecordsChecker      = checker{[]Anomaly{DeletedRecordsServed}, only((*analysis).deletedRecordsServed)}
	logChecker                 = checker{[]Anomaly{NonlinearizableLog}, (*analysis).logLinearizability}
	committedOffsetChecker     = checker{[]Anomaly{NonlinearizableCommittedOffset}, (*analysis).committedOffsets}
)

// everyChecker is what Check runs: the cheap checks first, porcupine last.
var everyChecker = []checker{
	lostWriteChecker,
	duplicateChecker,
	inconsistentOffsetsChecker,
	nonmonotonicSendChecker,
	pollOrderChecker,
	internalPollOrderChecker,
	abortedReadChecker,
	groupOwnershipChecker,
	staleGenerationChecker,
	deletedRecordsChecker,
	logChecker,
	committedOffsetChecker,
}

// Check runs every checker on a history. A malformed history (see
// history.Validate) or invalid options give a report with Error set and
// verdict Fail.
func Check(ops []history.Op, options Options) Report {
	return checkWith(ops, options, everyChecker...)
}

// CheckLostWrites reports lost-write and unseen.
func CheckLostWrites(ops []history.Op, options Options) Report {
	return checkWith(ops, options, lostWriteChecker)
}

// CheckDuplicates reports duplicate.
func CheckDuplicates(ops []history.Op, options Options) Report {
	return checkWith(ops, options, duplicateChecker)
}

// CheckInconsistentOffsets reports inconsistent-offsets.
func CheckInconsistentOffsets(ops []history.Op, options Options) Report {
	return checkWith(ops, options, inconsistentOffsetsChecker)
}

// CheckNonmonotonicSends reports nonmonotonic-send.
func CheckNonmonotonicSends(ops []history.Op, options Options) Report {
	return checkWith(ops, options, nonmonotonicSendChecker)
}

// CheckPollOrder reports poll-skip and nonmonotonic-poll.
func CheckPollOrder(ops []history.Op, options Options) Report {
	return checkWith(ops, options, pollOrderChecker)
}

// CheckInternalPollOrder reports internal-poll-skip and
// internal-nonmonotonic-poll.
func CheckInternalPollOrder(ops []history.Op, options Options) Report {
	return checkWith(ops, options, internalPollOrderChecker)
}

// CheckAbortedReads reports aborted-read.
func CheckAbortedReads(ops []history.Op, options Options) Report {
	return checkWith(ops, options, abortedReadChecker)
}

// CheckGroupOwnership reports group-ownership.
func CheckGroupOwnership(ops []history.Op, options Options) Report {
	return checkWith(ops, options, groupOwnershipChecker)
}

// CheckStaleGenerationCommits reports stale-generation-commit.
func CheckStaleGenerationCommits(ops []history.Op, options Options) Report {
	return checkWith(ops, options, staleGenerationChecker)
}

// CheckDeletedRecordsServed reports deleted-records-served.
func CheckDeletedRecordsServed(ops []history.Op, options Options) Report {
	return checkWith(ops, options, deletedRecordsChecker)
}

// CheckLogLinearizability runs porcupine on every partition's log and
// reports nonlinearizable-log, and searches that ran out of budget.
func CheckLogLinearizability(ops []history.Op, options Options) Report {
	return checkWith(ops, options, logChecker)
}

// CheckCommittedOffsets runs porcupine on every (group, partition)'s
// committed offset and reports nonlinearizable-committed-offset, and
// searches that ran out of budget.
func CheckCommittedOffsets(ops []history.Op, options Options) Report {
	return checkWith(ops, options, committedOffsetChecker)
}

func checkWith(ops []history.Op, options Options, checkers ...checker) Report {
	var checked []Anomaly
	for _, c := range checkers {
		checked = append(checked, c.anomalies...)
	}
	a, err := newAnalysis(ops, options)
	if err != nil {
		return errorReport(len(ops), checked, err)
	}
	var findings []Finding
	var inconclusive []Inconclusive
	for _, c := range checkers {
		found, unsure := c.run(a)
		findings = append(findings, found...)
		inconclusive = append(inconclusive, unsure...)
	}
	return newReport(len(ops), checked, findings, inconclusive)
}
