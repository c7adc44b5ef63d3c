package checker

import (
	"fmt"

	"sluice/jepsen/history"
)

// internalPollOrder looks inside every ok poll: each partition's records
// must come in increasing offsets, and a gap between neighbours must not
// hide an offset known to hold a record. Where the poll's fetch position
// is known, it counts as the neighbour before the first record.
func (a *analysis) internalPollOrder() []Finding {
	var findings []Finding
	for _, operation := range a.operations {
		if operation.F != history.FuncPoll || operation.Type != history.OK {
			continue
		}
		for _, poll := range a.ops[operation.Complete].Polls {
			if finding, bad := a.judgeFetchPosition(operation, poll); bad {
				findings = append(findings, finding)
			}
			for i := 1; i < len(poll.Records); i++ {
				previous, offset := poll.Records[i-1].Offset, poll.Records[i].Offset
				if offset <= previous {
					findings = append(findings, Finding{
						Anomaly:   InternalNonmonotonicPoll,
						Status:    a.status(InternalNonmonotonicPoll, poll.Partition),
						Partition: poll.Partition,
						Ops:       opList(operation.Complete),
						Detail: fmt.Sprintf("op %d received offset %d (%q) then offset %d (%q)",
							operation.Complete, previous, poll.Records[i-1].Value, offset, poll.Records[i].Value),
					})
					continue
				}
				if skipped, known := a.logs[poll.Partition].knownBetween(previous, offset); known {
					findings = append(findings, Finding{
						Anomaly:   InternalPollSkip,
						Status:    a.skipStatus(poll.Partition, previous, offset),
						Partition: poll.Partition,
						Ops:       opList(operation.Complete),
						Detail: fmt.Sprintf("op %d received offset %d then offset %d, skipping known offset %d",
							operation.Complete, previous, offset, skipped),
					})
				}
			}
		}
	}
	return findings
}

// judgeFetchPosition compares a poll's first record with the position it
// fetched from: a consumer at position p must be handed the record at p
// first, if p is known to hold one, and never anything below p.
func (a *analysis) judgeFetchPosition(operation history.Operation, poll history.Poll) (Finding, bool) {
	if poll.From == history.OffsetUnknown || len(poll.Records) == 0 {
		return Finding{}, false
	}
	first := poll.Records[0].Offset
	if first < poll.From {
		return Finding{
			Anomaly:   InternalNonmonotonicPoll,
			Status:    a.status(InternalNonmonotonicPoll, poll.Partition),
			Partition: poll.Partition,
			Ops:       opList(operation.Complete),
			Detail: fmt.Sprintf("op %d fetched from offset %d but received offset %d (%q) first",
				operation.Complete, poll.From, first, poll.Records[0].Value),
		}, true
	}
	if skipped, known := a.logs[poll.Partition].knownBetween(poll.From-1, first); known {
		return Finding{
			Anomaly:   InternalPollSkip,
			Status:    a.skipStatus(poll.Partition, poll.From-1, first),
			Partition: poll.Partition,
			Ops:       opList(operation.Complete),
			Detail: fmt.Sprintf("op %d fetched from offset %d but received offset %d first, skipping known offset %d",
				operation.Complete, poll.From, first, skipped),
		}, true
	}
	return Finding{}, false
}
