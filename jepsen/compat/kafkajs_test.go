package compat

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	kafkajsInstall = "apt-get install nodejs npm, then npm ci --prefix jepsen/compat/js (installs kafkajs 2.2.4 from its package-lock.json)"
	// kafkajsScript is the node program, relative to this package.
	kafkajsScript = "js/roundtrip.js"
	// joinGroupKey is JoinGroup's API key: a broker that advertises it
	// serves consumer groups, which kafkajs' public consumer needs.
	joinGroupKey = 11
)

// kafkajsCodecs are the codecs kafkajs has built in; snappy, lz4 and zstd
// need plugin packages.
var kafkajsCodecs = []string{codecNone, codecGzip}

// TestKafkajsRoundTrip: kafkajs 2.2.4 under node, driven one step at a
// time by js/roundtrip.js: admin createTopics and fetchTopicOffsets, an
// idempotent producer (murmur2 partitioning like the Java client), and
// Fetch requests through kafkajs' own broker objects for reading, since
// its public consumer needs consumer groups. Then consumer.run with a
// group, which is skipped until the broker serves groups.
func TestKafkajsRoundTrip(t *testing.T) {
	node, script := requireKafkajs(t)
	matrix.record("kafkajs", availableRow, outcomePass)
	broker := StartBroker(t, Options{})
	client := &kafkajsClient{node: node, script: script, address: broker.Addr()}
	steps := runRoundTrip(t, "kafkajs", broker, client)
	steps.step("consumer.run (consumer group)", false, func(t *testing.T) {
		if !brokerAdvertises(t, broker.Addr(), joinGroupKey) {
			t.Skip("the broker does not serve consumer groups yet (no FindCoordinator/JoinGroup), which kafkajs' consumer.run needs")
		}
		plan := roundTripPlan(client.codecs())
		var answer struct{ Records []kafkajsRecord }
		client.run(t, &answer, "group", roundTripTopic, strconv.Itoa(len(plan)))
		reportProblems(t, "group content", checkContent(plan, kafkajsConsumed(t, answer.Records)))
	})
	steps.step("admin.describeAcls (no authorizer)", false, func(t *testing.T) {
		// kafkajs raises SECURITY_DISABLED, as against Kafka without an
		// authorizer; an API missing from ApiVersions would make it say
		// the broker is too old instead.
		var answer struct {
			Error *struct{ Type, Message string }
		}
		client.run(t, &answer, "acls", "-")
		if answer.Error == nil || answer.Error.Type != "SECURITY_DISABLED" {
			t.Fatalf("describeAcls answered %+v, want kafkajs' SECURITY_DISABLED", answer.Error)
		}
	})
}

// requireKafkajs finds node and the script that drives kafkajs, or fails
// or skips t as requireOutside says.
func requireKafkajs(t *testing.T) (node, script string) {
	t.Helper()
	node = requireOutsideTool(t, "kafkajs", "node", kafkajsInstall)
	script, err := filepath.Abs(kafkajsScript)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(script), "node_modules", "kafkajs", "package.json")); err != nil {
		requireOutside(t, "kafkajs", fmt.Sprintf("kafkajs is not installed next to %s (%v); install it with: %s", script, err, kafkajsInstall))
	}
	return node, script
}

type kafkajsClient struct {
	node    string
	script  string
	address string
}

// run runs one step of js/roundtrip.js and decodes its JSON answer.
func (c *kafkajsClient) run(t *testing.T, answer any, command string, args ...string) {
	t.Helper()
	output := runOutsideTool(t, nil, c.node, append([]string{c.script, command, c.address}, args...)...)
	if err := json.Unmarshal(output, answer); err != nil {
		t.Fatalf("roundtrip.js %s answered %q: %v", command, tail(output, outsideToolOutputMax), err)
	}
}

func (c *kafkajsClient) codecs() []string { return kafkajsCodecs }

func (c *kafkajsClient) createTopic(t *testing.T, topic string) {
	var answer struct {
		Created  bool
		Metadata struct {
			Topics []struct {
				Name       string
				Partitions []struct {
					PartitionErrorCode int16
					PartitionID        int32 `json:"partitionId"`
					Leader             int32
				}
			}
		}
	}
	c.run(t, &answer, "create", topic, strconv.Itoa(roundTripPartitions))
	if !answer.Created {
		t.Errorf("admin.createTopics answered false (topic existed already?)")
	}
	if len(answer.Metadata.Topics) != 1 || answer.Metadata.Topics[0].Name != topic {
		t.Fatalf("fetchTopicMetadata: %+v", answer.Metadata)
	}
	var partitions []int32
	for _, p := range answer.Metadata.Topics[0].Partitions {
		partitions = append(partitions, p.PartitionID)
		if p.PartitionErrorCode != 0 || p.Leader < 0 {
			t.Errorf("partition %d: leader %d, error code %d", p.PartitionID, p.Leader, p.PartitionErrorCode)
		}
	}
	slices.Sort(partitions)
	if !slices.Equal(partitions, []int32{0, 1, 2}) {
		t.Errorf("fetchTopicMetadata lists partitions %v, want [0 1 2]", partitions)
	}
}

// kafkajsPlanned is one planned record as roundtrip.js reads it: bytes
// as base64 (encoding/json's way with []byte), null as null.
type kafkajsPlanned struct {
	Codec   string          `json:"codec"`
	Key     []byte          `json:"key"`
	Value   []byte          `json:"value"`
	Headers []kafkajsHeader `json:"headers"`
}

type kafkajsHeader struct {
	Key   string `json:"key"`
	Value []byte `json:"value"`
}

// produce hands the plan to roundtrip.js, which sends each codec's run of
// records in one producer.send. kafkajs answers per partition, not per
// record, so the order check takes partitions from where records are read.
func (c *kafkajsClient) produce(t *testing.T, topic string, plan []plannedRecord) []producedRecord {
	planned := make([]kafkajsPlanned, len(plan))
	for i, r := range plan {
		planned[i] = kafkajsPlanned{Codec: r.Codec, Key: r.Key, Value: r.Value, Headers: []kafkajsHeader{}}
		for _, h := range r.Headers {
			planned[i].Headers = append(planned[i].Headers, kafkajsHeader{Key: h.Key, Value: h.Value})
		}
	}
	encoded, err := json.Marshal(planned)
	if err != nil {
		t.Fatal(err)
	}
	planFile := filepath.Join(t.TempDir(), "plan.json")
	if err := os.WriteFile(planFile, encoded, 0o644); err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Sends [][]struct {
			TopicName string
			Partition int32
			ErrorCode int16
		}
	}
	c.run(t, &answer, "produce", topic, planFile)
	for _, send := range answer.Sends {
		for _, p := range send {
			if p.ErrorCode != 0 {
				t.Errorf("producer.send: partition %d error code %d", p.Partition, p.ErrorCode)
			}
		}
	}
	produced := make([]producedRecord, len(plan))
	for i, r := range plan {
		produced[i] = producedRecord{record: r.record, Partition: -1, Offset: -1}
	}
	return produced
}

// kafkajsRecord is one record roundtrip.js read.
type kafkajsRecord struct {
	Partition int32           `json:"partition"`
	Offset    string          `json:"offset"`
	Key       []byte          `json:"key"`
	Value     []byte          `json:"value"`
	Headers   []kafkajsHeader `json:"headers"`
}

func kafkajsConsumed(t *testing.T, records []kafkajsRecord) []consumedRecord {
	consumed := make([]consumedRecord, len(records))
	for i, r := range records {
		offset, err := strconv.ParseInt(r.Offset, 10, 64)
		if err != nil {
			t.Fatalf("record offset %q: %v", r.Offset, err)
		}
		consumed[i] = consumedRecord{record: record{Key: r.Key, Value: r.Value}, Partition: r.Partition, Offset: offset}
		for _, h := range r.Headers {
			consumed[i].Headers = append(consumed[i].Headers, header{Key: h.Key, Value: h.Value})
		}
	}
	return consumed
}

func (c *kafkajsClient) consume(t *testing.T, topic string, count int) []consumedRecord {
	var answer struct{ Records []kafkajsRecord }
	c.run(t, &answer, "consume", topic, strconv.Itoa(count))
	return kafkajsConsumed(t, answer.Records)
}

func (c *kafkajsClient) listOffsets(t *testing.T, topic string) (earliest, latest map[int32]int64) {
	var answer struct {
		Offsets []struct {
			Partition int32
			Low       string
			High      string
		}
	}
	c.run(t, &answer, "offsets", topic)
	earliest, latest = map[int32]int64{}, map[int32]int64{}
	for _, o := range answer.Offsets {
		low, lowErr := strconv.ParseInt(o.Low, 10, 64)
		high, highErr := strconv.ParseInt(o.High, 10, 64)
		if lowErr != nil || highErr != nil {
			t.Fatalf("fetchTopicOffsets partition %d: low %q, high %q", o.Partition, o.Low, o.High)
		}
		earliest[o.Partition], latest[o.Partition] = low, high
	}
	return earliest, latest
}

// hash is kafkajs' DefaultPartitioner: murmur2 like the Java client (and
// franz-go), round-robin for null keys.
func (c *kafkajsClient) hash(key []byte, partitions int32) (int32, bool) {
	if key == nil {
		return 0, false
	}
	return int32(kgo.StickyKeyPartitioner(nil).ForTopic(roundTripTopic).Partition(&kgo.Record{Key: key}, int(partitions))), true
}

// brokerAdvertises asks the broker's ApiVersions whether it serves key.
func brokerAdvertises(t *testing.T, address string, key int16) bool {
	t.Helper()
	conn, err := net.DialTimeout("tcp", address, probeTimeout)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	req := kmsg.NewPtrApiVersionsRequest()
	req.SetVersion(3)
	req.ClientSoftwareName = clientID
	req.ClientSoftwareVersion = "1"
	resp, err := RoundTrip(conn, req, 1, clientTimeout)
	if err != nil {
		t.Fatalf("ApiVersions: %v", err)
	}
	for _, api := range resp.(*kmsg.ApiVersionsResponse).ApiKeys {
		if api.ApiKey == key {
			return true
		}
	}
	return false
}
