package checker

import (
	"fmt"

	"github.com/anishathalye/porcupine"

	"sluice/jepsen/history"
)

// logLinearizability runs porcupine on every partition's log, one
// partition at a time, so each gets its own verdict and budget.
func (a *analysis) logLinearizability() ([]Finding, []Inconclusive) {
	var findings []Finding
	var inconclusive []Inconclusive
	budget := a.options.searchBudget()
	for _, tp := range a.partitions {
		s := a.logSearch(tp)
		outcome := s.run(budget)
		switch outcome.result {
		case porcupine.Ok:
		case porcupine.Illegal:
			status, detail := a.status(NonlinearizableLog, tp), s.describeIllegal(outcome)
			if status == Failure {
				explanation, verdict := a.explainedByDeletion(tp, budget)
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
			detail := outcome.budget
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
// state with the deleted first copy (as Kafka's does). A second search
// places such copies: each at its offset when a poll saw it (the
// duplicate check judges the duplicate itself), and, when nobody did,
// as one record too many below the log start.
func (a *analysis) explainedByDeletion(tp history.TopicPartition, budget searchBudget) (string, deletionVerdict) {
	if a.logStart[tp] == 0 {
		return "", deletionDoesNotExplain
	}
	outcome := a.logSearchWithDeletedCopies(tp).run(budget)
	switch outcome.result {
	case porcupine.Ok:
		return fmt.Sprintf("; it linearizes if retries wrote values a second time after their first copies, below the log start %d, were deleted before anyone read them (a leader without the producer's state accepts the retry, as Kafka does)", a.logStart[tp]), deletionExplains
	case porcupine.Unknown:
		return fmt.Sprintf("; allowing retries' deleted copies below the log start %d, %s", a.logStart[tp], outcome.budget), deletionUndecided
	}
	return "", deletionDoesNotExplain
}

// deletionVerdict is whether retention explains a log no linearization
// fits (explainedByDeletion).
type deletionVerdict int

const (
	deletionDoesNotExplain deletionVerdict = iota
	deletionExplains
	// deletionUndecided: the search that would say ran out of budget.
	deletionUndecided
)
