package checker

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"sluice/jepsen/history"
)

// deletedRecordsServed finds ok polls invoked after a DeleteRecords answer
// (Options.DeletesAnswered) that returned a record of the answer's
// partition below its low watermark. Per partition the answers are sorted
// by time and folded into the highest low watermark answered so far; each
// poll looks up what was highest just before its invoke. One finding per
// poll and partition, naming its first such record; permitted in a
// partition a leader was elected for outside the ISR
// (Options.UncleanElected).
func (a *analysis) deletedRecordsServed() []Finding {
	if len(a.options.DeletesAnswered) == 0 {
		return nil
	}
	type raise struct{ at, lowWatermark int64 }
	raised := map[history.TopicPartition][]raise{}
	answers := slices.Clone(a.options.DeletesAnswered)
	slices.SortStableFunc(answers, func(x, y DeleteAnswered) int { return cmp.Compare(x.At, y.At) })
	for _, d := range answers {
		list := raised[d.Partition]
		if n := len(list); n == 0 || d.LowWatermark > list[n-1].lowWatermark {
			raised[d.Partition] = append(list, raise{d.At, d.LowWatermark})
		}
	}
	unclean := map[history.TopicPartition]bool{}
	for _, tp := range a.options.UncleanElected {
		unclean[tp] = true
	}
	var findings []Finding
	for _, operation := range a.operations {
		if operation.F != history.FuncPoll || operation.Type != history.OK {
			continue
		}
		invoked := a.ops[operation.Invoke].Time
		for _, poll := range a.ops[operation.Complete].Polls {
			list := raised[poll.Partition]
			// The answers strictly before the poll's invoke.
			at, _ := slices.BinarySearchFunc(list, invoked, func(r raise, t int64) int { return cmp.Compare(r.at, t) })
			if at == 0 {
				continue
			}
			answered := list[at-1]
			for _, record := range poll.Records {
				if record.Offset >= answered.lowWatermark {
					continue
				}
				status := Failure
				if unclean[poll.Partition] {
					status = Permitted
				}
				findings = append(findings, Finding{
					Anomaly:   DeletedRecordsServed,
					Status:    status,
					Partition: poll.Partition,
					Ops:       opList(operation.Complete),
					Detail: fmt.Sprintf("a poll invoked at %v (op %d) read offset %d (%q), below %d, which a DeleteRecords answered at %v said was deleted",
						time.Duration(invoked), operation.Complete, record.Offset, record.Value, answered.lowWatermark, time.Duration(answered.at)),
				})
				break
			}
		}
	}
	return findings
}
