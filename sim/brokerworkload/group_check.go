package brokerworkload

import (
	"fmt"
	"strings"

	"sluice/jepsen/checker"
	"sluice/jepsen/history"
)

// checkGroupSawEverything judges what the group alone read: the history's
// sends and its consumers' operations, without the readers and the final
// drain. The group drained to every partition's end, so an acknowledged
// value none of its consumers polled is one the group skipped: reported
// as "group-unseen" (or "group-lost-write" when a consumer polled past
// it). Acks=1 producers may lose values, as for the whole history.
func (r *run) checkGroupSawEverything() *violation {
	consumers := map[int]bool{}
	for _, process := range r.consumerProcesses() {
		consumers[process] = true
	}
	// The history is read op by op (Recorder.Op), not copied whole: the
	// group's ops make a history of their own.
	var original []int // the full history's index of each op kept
	for index := range r.recorder.Len() {
		op := r.recorder.Op(index)
		if op.F == history.FuncSend || consumers[op.Process] {
			original = append(original, index)
		}
	}
	ops := make([]history.Op, len(original))
	for i, index := range original {
		ops[i] = r.recorder.Op(index)
		ops[i].Index = i
	}
	report := checker.CheckLostWrites(ops, checker.Options{
		LossySenders: r.lossySenders(),
		FinalDrain:   true,
	})
	if report.Error != "" {
		return &violation{"group-history", report.Error}
	}
	for _, anomaly := range []checker.Anomaly{checker.LostWrite, checker.Unseen} {
		class, _ := report.Class(anomaly)
		if class.Failures == 0 {
			continue
		}
		var examples []string
		for _, finding := range class.FailureExamples(checker.ViolationExamplesMax) {
			var full []int
			for _, op := range finding.Ops {
				full = append(full, original[op])
			}
			examples = append(examples, fmt.Sprintf("%s (ops %v of the whole history)", finding, full))
		}
		return &violation{"group-" + string(anomaly), fmt.Sprintf("%d failures in the group's history; %s",
			class.Failures, strings.Join(examples, "; "))}
	}
	return nil
}
