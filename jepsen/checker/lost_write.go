package checker

import (
	"fmt"

	"sluice/jepsen/history"
)

// lostWrites finds LostWrite and Unseen values: ok sends no poll received,
// split by whether some poll reached their offset. The two are disjoint,
// so a value is counted once.
func (a *analysis) lostWrites() []Finding {
	var findings []Finding
	for _, sent := range a.sends {
		if sent.operation.Type != history.OK || a.wasPolled(sent.value) {
			continue
		}
		log := a.logs[sent.partition]
		if sent.offset != history.OffsetUnknown && sent.offset <= log.maxPolledOffset {
			findings = append(findings, Finding{
				Anomaly:   LostWrite,
				Status:    a.lostStatus(sent),
				Partition: sent.partition,
				Ops:       opList(sent.operation.Complete, log.maxPolledOp),
				Detail: fmt.Sprintf("value %q acknowledged at offset %d by op %d was never polled, though op %d polled offset %d",
					sent.value, sent.offset, sent.operation.Complete, log.maxPolledOp, log.maxPolledOffset),
			})
			continue
		}
		findings = append(findings, Finding{
			Anomaly:   Unseen,
			Status:    a.unseenStatus(sent),
			Partition: sent.partition,
			Ops:       opList(sent.operation.Complete),
			Detail: fmt.Sprintf("value %q acknowledged at %s by op %d was never polled",
				sent.value, describeOffset(sent.offset), sent.operation.Complete),
		})
	}
	return findings
}

// unseenStatus: without a final drain an unseen value may simply not have
// been read yet, so it judges nothing.
func (a *analysis) unseenStatus(sent sentValue) Status {
	if !a.options.FinalDrain {
		return Informational
	}
	return a.lostStatus(sent)
}

// lostStatus judges a value no poll received: permitted where retention
// deleted its offset before anyone read it, where the partition may lose
// anything, or where its sender may lose what it sends; a failure for
// another sender's value in a partition a lossy sender shares.
func (a *analysis) lostStatus(sent sentValue) Status {
	if a.deleted(sent.partition, sent.offset) || a.lossPermitted[sent.partition] || a.lossySenders[sent.operation.Process] {
		return Permitted
	}
	return Failure
}

func describeOffset(offset int64) string {
	if offset == history.OffsetUnknown {
		return "an unknown offset"
	}
	return fmt.Sprintf("offset %d", offset)
}
