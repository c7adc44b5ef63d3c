package compat

import (
	"bytes"
	"maps"
	"testing"
)

// kcatGroupCounts and kcatGroupCountsLater are the records produced to
// each partition before kcat's first run and between its two runs.
var (
	kcatGroupCounts      = []int{10, 11, 12, 13, 14, 15}
	kcatGroupCountsLater = []int{5, 4, 3, 2, 1, 6}
)

// TestKcatGroup: kcat -G (librdkafka's balanced consumer) reads a
// 6-partition topic as the only member of its group until every assigned
// partition hits its end (-e), committing as librdkafka does by default
// (auto commit, and a final commit when it closes). It must read every
// record once, and FetchOffsets then shows the partitions' ends. A second
// run of the same group, after more records were produced, must read
// exactly those and nothing old.
func TestKcatGroup(t *testing.T) {
	program := requireOutsideTool(t, "kcat", "kcat", kcatInstall)
	t.Parallel()
	steps := newClientSteps(t, "kcat")
	broker := StartBroker(t, Options{})
	const topic, group = "kcat-group", "kcat-group"
	var produced map[partitionOffset]string
	consume := func(t *testing.T) []groupRead {
		output := runOutsideTool(t, nil, program, "-b", broker.Addr(), "-G", group,
			"-X", "session.timeout.ms="+millisecondsText(groupSessionTimeout),
			"-X", "heartbeat.interval.ms="+millisecondsText(groupHeartbeatInterval),
			"-X", "auto.offset.reset=earliest",
			"-e", "-f", kcatFormat, topic)
		var reads []groupRead
		for line := range bytes.Lines(output) {
			r, err := parseKcatLine(bytes.TrimSuffix(line, []byte("\n")))
			if err != nil {
				t.Fatalf("kcat output line %q: %v", tail(line, 200), err)
			}
			reads = append(reads, groupRead{member: "kcat", at: partitionOffset{r.Partition, r.Offset}, value: string(r.Value)})
		}
		return reads
	}

	steps.step(groupConsumeStep, true, func(t *testing.T) {
		createTopicWithFranzGo(t, broker.Addr(), topic, groupPartitions)
		produced = produceToPartitions(t, broker.Addr(), topic, kcatGroupCounts)
		reportProblems(t, "first run", checkExactlyOnce(produced, consume(t)))
	})
	steps.step(groupCommitsStep, true, func(t *testing.T) {
		checkCommitted(t, broker.Addr(), group, topic, endOffsetsOf(produced))
	})
	steps.step(groupRerunStep, false, func(t *testing.T) {
		later := produceToPartitions(t, broker.Addr(), topic, kcatGroupCountsLater)
		reportProblems(t, "second run", checkExactlyOnce(later, consume(t)))
		maps.Copy(produced, later)
		checkCommitted(t, broker.Addr(), group, topic, endOffsetsOf(produced))
	})
}
