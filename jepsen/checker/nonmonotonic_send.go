package checker

import (
	"fmt"

	"sluice/jepsen/history"
)

// nonmonotonicSends walks each process's ok sends in order and flags an
// acknowledged offset at or below the process's previous one in the same
// partition. A process runs one operation at a time, so its sends are
// ordered in real time and the log must order them the same way.
func (a *analysis) nonmonotonicSends() []Finding {
	type acknowledged struct {
		value  string
		offset int64
		op     int
	}
	var findings []Finding
	last := map[history.TopicPartition]acknowledged{} // emptied for each process
	for _, operations := range a.opsByProcess() {
		clear(last)
		for _, operation := range operations {
			if operation.F != history.FuncSend || operation.Type != history.OK {
				continue
			}
			for _, send := range a.ops[operation.Complete].Sends {
				if send.Offset == history.OffsetUnknown {
					continue
				}
				previous, seen := last[send.Partition]
				if seen && send.Offset <= previous.offset {
					findings = append(findings, Finding{
						Anomaly:   NonmonotonicSend,
						Status:    a.status(NonmonotonicSend, send.Partition),
						Partition: send.Partition,
						Ops:       opList(previous.op, operation.Complete),
						Detail: fmt.Sprintf("process %d sent %q to offset %d (op %d), then %q to offset %d (op %d)",
							operation.Process, previous.value, previous.offset, previous.op,
							send.Value, send.Offset, operation.Complete),
					})
				}
				last[send.Partition] = acknowledged{value: send.Value, offset: send.Offset, op: operation.Complete}
			}
		}
	}
	return findings
}
