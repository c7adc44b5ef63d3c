package checker

import (
	"fmt"

	"sluice/jepsen/history"
)

// abortedReads finds polled values whose send failed: the client was told
// the write definitely did not happen, yet a consumer read it.
func (a *analysis) abortedReads() []Finding {
	var findings []Finding
	for _, sent := range a.sends {
		if sent.operation.Type != history.Fail || !a.wasPolled(sent.value) {
			continue
		}
		readers := a.pollsOf(sent.value)
		findings = append(findings, Finding{
			Anomaly:   AbortedRead,
			Status:    Failure,
			Partition: sent.partition,
			Ops:       opListPreferring([]int{sent.operation.Complete}, readers),
			Detail: fmt.Sprintf("value %q, whose send failed (op %d), was polled by %s",
				sent.value, sent.operation.Complete, describeOps(readers)),
		})
	}
	return findings
}
