package checker

import (
	"fmt"
	"strings"
)

// ViolationOrder is the order in which a run names its failure when
// several anomaly classes fail: the loss of acknowledged data first, then
// what breaks the log's shape, then the groups, then the whole-history
// linearizability searches, which any of the others also trips.
var ViolationOrder = []Anomaly{
	LostWrite,
	Unseen,
	Duplicate,
	InconsistentOffsets,
	AbortedRead,
	NonmonotonicSend,
	PollSkip,
	NonmonotonicPoll,
	InternalPollSkip,
	InternalNonmonotonicPoll,
	GroupOwnership,
	StaleGenerationCommit,
	DeletedRecordsServed,
	NonlinearizableLog,
	NonlinearizableCommittedOffset,
}

// ViolationExamplesMax bounds the findings a violation's detail quotes.
const ViolationExamplesMax = 3

// CheckInconclusive is the check Violation names for a report whose only
// fault is a search that ran out of its budget (Options.SearchSteps).
const CheckInconclusive = "inconclusive"

// Violation names what failed in a report as one check and its detail,
// as a simulated run reports it: "history" for a history that could not
// be checked, else the first anomaly of ViolationOrder with failures
// (quoting its first failing findings), else "inconclusive" for a search
// that ran out of budget, else "checker" for any other invalid report.
// failed is false when the report is a pass.
func (r Report) Violation() (check, detail string, failed bool) {
	if r.Error != "" {
		return "history", r.Error, true
	}
	for _, anomaly := range ViolationOrder {
		class, checked := r.Class(anomaly)
		if !checked || class.Failures == 0 {
			continue
		}
		var examples []string
		for _, finding := range class.FailureExamples(ViolationExamplesMax) {
			examples = append(examples, finding.String())
		}
		return string(anomaly), fmt.Sprintf("%d failures; %s", class.Failures, strings.Join(examples, "; ")), true
	}
	if r.Verdict == Unknown {
		var searches []string
		for _, inconclusive := range r.Inconclusive {
			searches = append(searches, inconclusive.String())
		}
		return CheckInconclusive, strings.Join(searches, "; "), true
	}
	if !r.Valid {
		return "checker", r.Summary(), true
	}
	return "", "", false
}

// FailureExamples is up to max of the class's example findings that are
// failures, in order.
func (c Class) FailureExamples(max int) []Finding {
	var failures []Finding
	for _, finding := range c.Examples {
		if finding.Status == Failure && len(failures) < max {
			failures = append(failures, finding)
		}
	}
	return failures
}
