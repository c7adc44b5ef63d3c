package checker

import (
	"fmt"

	"sluice/jepsen/history"
)

// pollOrder walks each process's operations in order, remembering per
// partition where its last poll with records ended, and compares the next
// poll's first record with it: at or below is a NonmonotonicPoll, past it
// with a known record in the gap is a PollSkip.
//
// What resets the memory: an ok or info assign, subscribe or crash forgets
// every partition (the consumer's positions may legitimately restart from
// committed offsets); an ok or info seek forgets the partitions it moved.
// Polls that received nothing from a partition leave its memory as it was.
func (a *analysis) pollOrder() []Finding {
	type lastPoll struct {
		offset int64 // the offset of the poll's last record
		op     int
	}
	var findings []Finding
	last := map[history.TopicPartition]lastPoll{} // emptied for each process
	for _, operations := range a.opsByProcess() {
		clear(last)
		for _, operation := range operations {
			if operation.Type != history.OK && operation.Type != history.Info {
				continue
			}
			switch operation.F {
			case history.FuncAssign, history.FuncSubscribe, history.FuncCrash:
				clear(last)
			case history.FuncSeek:
				for _, seek := range a.ops[operation.Invoke].Seeks {
					delete(last, seek.Partition)
				}
			case history.FuncPoll:
				if operation.Type != history.OK {
					continue
				}
				for _, poll := range a.ops[operation.Complete].Polls {
					if len(poll.Records) == 0 {
						continue
					}
					first := poll.Records[0].Offset
					if previous, seen := last[poll.Partition]; seen {
						if finding, bad := a.judgePollStart(operation, poll.Partition, previous.offset, previous.op, first); bad {
							findings = append(findings, finding)
						}
					}
					last[poll.Partition] = lastPoll{offset: poll.Records[len(poll.Records)-1].Offset, op: operation.Complete}
				}
			}
		}
	}
	return findings
}

// judgePollStart compares a poll's first offset with where the process's
// previous poll of the partition ended.
func (a *analysis) judgePollStart(operation history.Operation, tp history.TopicPartition, previousLast int64, previousOp int, first int64) (Finding, bool) {
	if first <= previousLast {
		return Finding{
			Anomaly:   NonmonotonicPoll,
			Status:    a.status(NonmonotonicPoll, tp),
			Partition: tp,
			Ops:       opList(previousOp, operation.Complete),
			Detail: fmt.Sprintf("process %d polled up to offset %d (op %d), then from offset %d (op %d)",
				operation.Process, previousLast, previousOp, first, operation.Complete),
		}, true
	}
	if skipped, known := a.logs[tp].knownBetween(previousLast, first); known {
		return Finding{
			Anomaly:   PollSkip,
			Status:    a.skipStatus(tp, previousLast, first),
			Partition: tp,
			Ops:       opList(previousOp, operation.Complete),
			Detail: fmt.Sprintf("process %d polled up to offset %d (op %d), then from offset %d (op %d), skipping known offset %d",
				operation.Process, previousLast, previousOp, first, operation.Complete, skipped),
		}, true
	}
	return Finding{}, false
}
