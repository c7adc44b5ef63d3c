package checker

import (
	"fmt"

	"github.com/anishathalye/porcupine"
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
			if status == Failure && a.duplicatedPastDeletion(tp) {
				// The model holds one append per value; a retry written
				// again after its first copy was deleted, with the
				// producer's state, is two. The duplicate check judges it.
				status = Permitted
				detail += "; the partition holds a value written again after its first copy was deleted (see duplicate)"
			} else if status == Failure && a.logStart[tp] > 0 && a.logSearchWithDeletedCopies(tp).run(timeout).result == porcupine.Ok {
				// The same, for a first copy nobody saw before it was
				// deleted: all that shows is one record too many below
				// the log start.
				status = Permitted
				detail += fmt.Sprintf("; it linearizes if retries wrote values a second time after their first copies, below the log start %d, were deleted before anyone read them (a leader without the producer's state accepts the retry, as Kafka does)", a.logStart[tp])
			}
			findings = append(findings, Finding{
				Anomaly:   NonlinearizableLog,
				Status:    status,
				Partition: tp,
				Ops:       opList(outcome.leftOut...),
				Detail:    detail,
			})
		case porcupine.Unknown:
			inconclusive = append(inconclusive, Inconclusive{
				Anomaly:   NonlinearizableLog,
				Partition: tp,
				Detail:    fmt.Sprintf("porcupine ran out of its %s budget on %d operations", timeout, len(s.operations)),
			})
		default:
			panic(fmt.Sprintf("checker: porcupine returned %q", outcome.result))
		}
	}
	return findings, inconclusive
}
