package compat

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"testing"
)

const (
	// sluiceCLIColumn is the matrix column of the binary's own client.
	sluiceCLIColumn = "sluice consume"
	// cliGroupPartitions is the CLI test topic's partition count: more
	// than one, so a run stops part way through some partitions.
	cliGroupPartitions = 3
	// cliGroupCount is each run's --count, below the records produced
	// (cliGroupCounts adds up to 40), so the second run has some left.
	cliGroupCount = 15
)

// cliGroupCounts are the records produced to each partition.
var cliGroupCounts = []int{12, 13, 15}

// TestSluiceConsumeGroupResumes: `sluice consume --group G --count N`
// twice. The first run prints N records and commits exactly those (a
// prefix of each partition); the second prints the next N, continuing
// each partition where the first stopped and never repeating one. After
// each run FetchOffsets shows the group's position right after the last
// record printed in each partition.
func TestSluiceConsumeGroupResumes(t *testing.T) {
	t.Parallel()
	steps := newClientSteps(t, sluiceCLIColumn)
	broker := StartBroker(t, Options{})
	binary := BuildBinary(t)
	const topic, group = "cli-group", "cli-group"
	var produced map[partitionOffset]string
	var first, second []partitionOffset
	consume := func(t *testing.T) []partitionOffset {
		output := runOutsideTool(t, nil, binary, "consume", "--brokers", broker.Addr(), "--topic", topic,
			"--group", group, "--count", strconv.Itoa(cliGroupCount))
		return parseCLIValues(t, topic, output)
	}

	steps.step(groupCommitsStep, true, func(t *testing.T) {
		createTopicWithFranzGo(t, broker.Addr(), topic, cliGroupPartitions)
		produced = produceToPartitions(t, broker.Addr(), topic, cliGroupCounts)
		first = consume(t)
		if len(first) != cliGroupCount {
			t.Fatalf("the first run printed %d records, want %d: %v", len(first), cliGroupCount, first)
		}
		reportProblems(t, "first run", checkPrefixes(produced, nil, first))
		checkCommitted(t, broker.Addr(), group, topic, positionsAfter(first))
	})
	steps.step(groupRerunStep, false, func(t *testing.T) {
		second = consume(t)
		if len(second) != cliGroupCount {
			t.Fatalf("the second run printed %d records, want %d: %v", len(second), cliGroupCount, second)
		}
		reportProblems(t, "second run", checkPrefixes(produced, first, second))
		checkCommitted(t, broker.Addr(), group, topic, positionsAfter(append(slices.Clone(first), second...)))
	})
}

// parseCLIValues reads the values `sluice consume` printed, one a line,
// as the places they name (groupValue).
func parseCLIValues(t *testing.T, topic string, output []byte) []partitionOffset {
	t.Helper()
	var places []partitionOffset
	for line := range bytes.Lines(output) {
		var at partitionOffset
		value := string(bytes.TrimSuffix(line, []byte("\n")))
		if _, err := fmt.Sscanf(value, topic+"-p%d-o%d", &at.Partition, &at.Offset); err != nil || groupValue(topic, at) != value {
			t.Fatalf("sluice consume printed %q, which is no value this test produced", value)
		}
		places = append(places, at)
	}
	return places
}

// checkPrefixes: the records run printed were produced, none twice, and
// with what earlier runs printed make up a prefix of every partition:
// each run continues a partition exactly where the last one stopped.
func checkPrefixes(produced map[partitionOffset]string, earlier, run []partitionOffset) problems {
	var found problems
	seen := map[partitionOffset]bool{}
	for _, at := range earlier {
		seen[at] = true
	}
	for _, at := range run {
		if _, ok := produced[at]; !ok {
			found.add("printed %v, where nothing was produced", at)
		}
		if seen[at] {
			found.add("printed %v again", at)
		}
		seen[at] = true
	}
	for _, at := range sortedPlaces(seen) {
		if at.Offset > 0 && !seen[partitionOffset{at.Partition, at.Offset - 1}] {
			found.add("printed %v, but never offset %d of partition %d before it", at, at.Offset-1, at.Partition)
		}
	}
	return found
}

// positionsAfter is, for each partition among places, the offset after
// the highest one: where a group that consumed them has committed.
func positionsAfter(places []partitionOffset) map[int32]int64 {
	next := map[int32]int64{}
	for _, at := range places {
		next[at.Partition] = max(next[at.Partition], at.Offset+1)
	}
	return next
}
