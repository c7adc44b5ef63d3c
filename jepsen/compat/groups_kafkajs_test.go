package compat

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

const (
	// kafkajsGroupsScript is the node program for group tests, relative
	// to this package.
	kafkajsGroupsScript = "js/groups.js"
	// kafkajsGroupConsumers is how many consumers it runs in the group.
	kafkajsGroupConsumers = 2
)

// kafkajsGroupAnswer is what js/groups.js reports.
type kafkajsGroupAnswer struct {
	Joins []struct {
		Consumer   int     `json:"consumer"`
		MemberID   string  `json:"memberId"`
		LeaderID   string  `json:"leaderId"`
		Protocol   string  `json:"protocol"`
		Partitions []int32 `json:"partitions"`
	} `json:"joins"`
	// JoinsToSettle is how many joins it took until the consumers'
	// assignments covered every partition once; a later one is a
	// rebalance while records flowed.
	JoinsToSettle int `json:"joinsToSettle"`
	Reads         []struct {
		Consumer  int     `json:"consumer"`
		Partition int32   `json:"partition"`
		Offset    string  `json:"offset"`
		Value     *string `json:"value"`
	} `json:"reads"`
}

// TestKafkajsGroup: two kafkajs consumers in one group, each with
// consumer.run and eachMessage, driven by js/groups.js. Once both have
// joined and their assignments cover every partition once, the script
// produces (with kafkajs), so nothing is read before the group settles.
// Every record must then be read exactly once, by the consumer assigned
// its partition, with no rebalance; after the consumers disconnect,
// FetchOffsets shows every record committed.
func TestKafkajsGroup(t *testing.T) {
	node := requireOutsideTool(t, "kafkajs", "node", kafkajsInstall)
	script, err := filepath.Abs(kafkajsGroupsScript)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(script), "node_modules", "kafkajs", "package.json")); err != nil {
		requireOutside(t, "kafkajs", fmt.Sprintf("kafkajs is not installed next to %s (%v); install it with: %s", script, err, kafkajsInstall))
	}
	t.Parallel()
	steps := newClientSteps(t, "kafkajs")
	broker := StartBroker(t, Options{})
	const topic, group = "kafkajs-group", "kafkajs-group"
	var answer kafkajsGroupAnswer
	owners := map[int32]string{} // partition -> consumer, once settled

	steps.step(groupJoinStep, true, func(t *testing.T) {
		createTopicWithFranzGo(t, broker.Addr(), topic, groupPartitions)
		output := runOutsideTool(t, nil, node, script, broker.Addr(), topic, group,
			strconv.Itoa(kafkajsGroupConsumers), strconv.Itoa(twoMemberRecordsPerPartition))
		if err := json.Unmarshal(output, &answer); err != nil {
			t.Fatalf("groups.js answered %q: %v", tail(output, outsideToolOutputMax), err)
		}
		if answer.JoinsToSettle < kafkajsGroupConsumers || answer.JoinsToSettle > len(answer.Joins) {
			t.Fatalf("groups.js says the group settled after %d joins of %d", answer.JoinsToSettle, len(answer.Joins))
		}
		latest := map[string][]int32{}
		for _, join := range answer.Joins[:answer.JoinsToSettle] {
			latest[kafkajsConsumerName(join.Consumer)] = join.Partitions
		}
		if !coversOnce(latest, groupPartitions) {
			t.Fatalf("settled assignment %v does not cover %d partitions once", latest, groupPartitions)
		}
		for consumer, partitions := range latest {
			for _, p := range partitions {
				owners[p] = consumer
			}
		}
		matrix.record("kafkajs", groupAssignorRow, outcome(answer.Joins[answer.JoinsToSettle-1].Protocol))
		t.Logf("settled after %d joins: %v", answer.JoinsToSettle, latest)
	})
	steps.step(groupConsumeStep, true, func(t *testing.T) {
		if later := len(answer.Joins) - answer.JoinsToSettle; later > 0 {
			t.Errorf("%d joins after the group settled: it rebalanced while records flowed: %+v", later, answer.Joins[answer.JoinsToSettle:])
		}
		produced := storedGroupRecords(t, broker.Addr(), topic, groupPartitions*twoMemberRecordsPerPartition)
		var reads []groupRead
		var found problems
		for _, r := range answer.Reads {
			offset, err := strconv.ParseInt(r.Offset, 10, 64)
			if err != nil || r.Value == nil {
				t.Fatalf("groups.js read offset %q, value %v", r.Offset, r.Value)
			}
			read := groupRead{member: kafkajsConsumerName(r.Consumer), at: partitionOffset{r.Partition, offset}, value: *r.Value}
			if owner := owners[r.Partition]; owner != read.member {
				found.add("%s read %v, but partition %d was assigned to %s", read.member, read.at, r.Partition, owner)
			}
			reads = append(reads, read)
		}
		reportProblems(t, "owners", found)
		reportProblems(t, "delivery", checkExactlyOnce(produced, reads))
	})
	steps.step(groupCommitsStep, false, func(t *testing.T) {
		checkCommitted(t, broker.Addr(), group, topic, sameEnd(groupPartitions, twoMemberRecordsPerPartition))
	})
}

func kafkajsConsumerName(index int) string { return "consumer-" + strconv.Itoa(index) }

// storedGroupRecords reads topic back with franz-go, the reference
// reader, and checks that it holds count records, each valued as
// groupValue says for its place: what a producer outside Go wrote.
func storedGroupRecords(t *testing.T, address, topic string, count int) map[partitionOffset]string {
	t.Helper()
	stored := map[partitionOffset]string{}
	var found problems
	for _, r := range consumeWithFranzGo(t, address, topic, groupPartitions, count) {
		at := partitionOffset{r.Partition, r.Offset}
		if want := groupValue(topic, at); string(r.Value) != want {
			found.add("stored %q at %v, want %q", r.Value, at, want)
		}
		stored[at] = string(r.Value)
	}
	reportProblems(t, "stored records", found)
	if len(stored) != count {
		t.Fatalf("the topic holds %d records, want %d", len(stored), count)
	}
	return stored
}

// sameEnd is every partition of partitions ending at offset end.
func sameEnd(partitions int32, end int64) map[int32]int64 {
	ends := map[int32]int64{}
	for p := range partitions {
		ends[p] = end
	}
	return ends
}
