package checker

import (
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"

	"sluice/jepsen/history"
)

// logLinearizability runs porcupine on every partition's log, one
// partition at a time, so each gets its own verdict and budget.
func (a *analysis) logLinearizability() ([]Finding, []Inconclusive) {
	var findings []Finding
	var inconclusive []Inconclusive
	timeout := a.options.linearizabilityTimeout()
	for _, tp := range a.partitions {
		s := a.logSearch(tp)
		outcome := s.run(timeout)
		switch outcome.result {
		case porcupine.Ok:
		case porcupine.Illegal:
			status, detail := a.status(NonlinearizableLog, tp), s.describeIllegal(outcome)
			if status == Failure {
				explanation, verdict := a.explainedByDeletion(tp, timeout)
				detail += explanation
				switch verdict {
				case deletionExplains:
					status = Permitted
				case deletionUndecided:
					// The log may be what retention and retries
					// permit; the search that would say so ran
					// out. Not a failure found: undecided, as any
					// search out of budget.
					inconclusive = append(inconclusive, Inconclusive{Anomaly: NonlinearizableLog, Partition: tp, Detail: detail})
					continue
				}
			}
			findings = append(findings, Finding{
				Anomaly:   NonlinearizableLog,
				Status:    status,
				Partition: tp,
				Ops:       opList(outcome.leftOut...),
				Detail:    detail,
			})
		case porcupine.Unknown:
			detail := fmt.Sprintf("porcupine ran out of its %s budget on %d operations", timeout, len(s.operations))
			if a.status(NonlinearizableLog, tp) == Permitted {
				// Losing acknowledged writes is permitted here (acks=1,
				// an unclean election), and so is the log that shows it:
				// no verdict of the search could fail the run. Such logs
				// are the hardest to search (porcupine must try every
				// order to prove none fits), so they run out the most.
				findings = append(findings, Finding{
					Anomaly: NonlinearizableLog, Status: Permitted, Partition: tp,
					Detail: detail + "; a log that does not linearize is permitted in this partition, so the search could not fail the run",
				})
				continue
			}
			inconclusive = append(inconclusive, Inconclusive{Anomaly: NonlinearizableLog, Partition: tp, Detail: detail})
		default:
			panic(fmt.Sprintf("checker: porcupine returned %q", outcome.result))
		}
	}
	return findings, inconclusive
}

// explainedByDeletion says whether retention explains a partition's log
// that no linearization fits, and how (a clause for the finding's
// detail). The model holds one append per value, but an idempotent
// producer's retry is written again when the leader lost the producer's
// state with the deleted first copy (as Kafka's does). When a poll saw
// that copy the duplicate check judges it; when nobody did, all that
// shows is one record too many below the log start, which a second search
// with deleted copies allowed there fits.
func (a *analysis) explainedByDeletion(tp history.TopicPartition, timeout time.Duration) (string, deletionVerdict) {
	if a.logStart[tp] == 0 {
		return "", deletionDoesNotExplain
	}
	if a.duplicatedPastDeletion(tp) {
		return "; the partition holds a value written again after its first copy was deleted (see duplicate)", deletionExplains
	}
	switch a.logSearchWithDeletedCopies(tp).runWithin(deletionSearchQuickSteps, timeout).result {
	case porcupine.Ok:
		return fmt.Sprintf("; it linearizes if retries wrote values a second time after their first copies, below the log start %d, were deleted before anyone read them (a leader without the producer's state accepts the retry, as Kafka does)", a.logStart[tp]), deletionExplains
	case porcupine.Unknown:
		return fmt.Sprintf("; a search allowing retries' deleted copies below the log start %d ran out of its %s budget", a.logStart[tp], timeout), deletionUndecided
	}
	return "", deletionDoesNotExplain
}

// deletionSearchQuickSteps is the quick search's budget (steps) for the
// search allowing deleted copies, before porcupine. That search offers a
// copy for each of the earliest sends, as many as the offsets nobody saw
// below the log start, and porcupine tries every subset of them at every
// point where they may go: cluster seed 4749359 (27 copies, 277
// operations, batching producers with five sends in flight) took it five
// minutes. The quick search, which linearizes copies as early as they
// may go and tries nothing else for them (eagerInput), found it in about
// 2^21 steps; 2^25 is a second or two of a run that is failing anyway,
// unless retention explains it.
const deletionSearchQuickSteps = 1 << 25

// deletionVerdict is whether retention explains a log no linearization
// fits (explainedByDeletion).
type deletionVerdict int

const (
	deletionDoesNotExplain deletionVerdict = iota
	deletionExplains
	// deletionUndecided: the search that would say ran out of budget.
	deletionUndecided
)
