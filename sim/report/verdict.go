package report

import (
	"regexp"
	"strconv"

	"sluice/jepsen/checker"
	"sluice/jepsen/history"
	"sluice/sim"
)

// culprit is what a failed run's verdict points at: the finding of the
// failing check, when the checker can name one, and the partition (and
// group) whose history shows it.
type culprit struct {
	// Partition and Group are what failed; Partition.Topic is empty when
	// nothing names a partition.
	Partition history.TopicPartition
	Group     string
	// Finding is the checker's first failure of the failing check, when
	// the check is one of the checker's anomaly classes.
	Finding *checker.Finding
	// Ops are the operations the finding names (history indexes).
	Ops map[int]bool
}

// findCulprit runs the checker again over the recorded history and takes
// the first failure of the run's failing check. Checks of the workload's
// own (replica-divergence, the group's skipped values, leaders) name
// their partition in the detail; it is read from there.
func findCulprit(r sim.Result) culprit {
	c := culprit{Ops: map[int]bool{}}
	recording := r.Recording
	if r.Passed() || recording == nil {
		return c
	}
	anomaly := checker.Anomaly(r.Check)
	if len(recording.History) > 0 {
		report := checker.Check(recording.History, recording.Checker)
		if class, ok := report.Class(anomaly); ok {
			for _, finding := range class.Examples {
				if finding.Status == checker.Failure {
					c.Finding = &finding
					c.Partition, c.Group = finding.Partition, finding.Group
					for _, op := range finding.Ops {
						c.Ops[op] = true
					}
					break
				}
			}
		}
	}
	if c.Partition.Topic == "" {
		c.Partition = partitionIn(r.Detail, recording.History)
	}
	if c.Group == "" {
		c.Group = groupIn(r.Detail)
	}
	return c
}

var (
	partitionPattern = regexp.MustCompile(`([A-Za-z0-9._]+)-([0-9]+)`)
	groupPattern     = regexp.MustCompile(`group[= ]"?([A-Za-z0-9._-]+)"?`)
)

// partitionIn finds the first "topic-N" in text that the history sends to
// or polls.
func partitionIn(text string, ops []history.Op) history.TopicPartition {
	known := map[history.TopicPartition]bool{}
	for _, op := range ops {
		for _, s := range op.Sends {
			known[s.Partition] = true
		}
		for _, p := range op.Polls {
			known[p.Partition] = true
		}
	}
	for _, m := range partitionPattern.FindAllStringSubmatch(text, -1) {
		n, err := strconv.Atoi(m[2])
		if err != nil {
			continue
		}
		tp := history.TopicPartition{Topic: m[1], Partition: int32(n)}
		if known[tp] {
			return tp
		}
	}
	return history.TopicPartition{}
}

func groupIn(text string) string {
	if m := groupPattern.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return ""
}

// committedOffsetCheck reports whether the failing check is about a
// group's committed offsets, whose history porcupine draws per group and
// partition rather than per partition log.
func committedOffsetCheck(check string) bool {
	switch checker.Anomaly(check) {
	case checker.NonlinearizableCommittedOffset, checker.StaleGenerationCommit:
		return true
	}
	return false
}
