package compat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const kcatInstall = "apt-get install kcat (Debian's kcat 1.7.1, librdkafka inside)"

// kcatFormat is the consume output format: one line per record, fields
// split by tabs (no planned record contains a tab or a newline). %K and
// %S are the key and value lengths, -1 for null, which is how the line
// tells null from empty.
const kcatFormat = "%p\t%o\t%K\t%k\t%S\t%s\t%h\n"

// TestKcatRoundTrip: kcat (librdkafka) produces from lines ("key:value",
// -K:), headers from -H, tombstones with -Z, each codec with -z and the
// idempotent producer on; consumes every partition with -C -e -o
// beginning; asks offsets with -Q; lists metadata with -L. kcat cannot
// create topics with a partition count, so a raw CreateTopics request
// does (not kadm: a franz-go problem must not hide kcat's results).
func TestKcatRoundTrip(t *testing.T) {
	program := requireOutsideTool(t, "kcat", "kcat", kcatInstall)
	matrix.record("kcat", availableRow, outcomePass)
	broker := StartBroker(t, Options{})
	client := &kcatClient{program: program, address: broker.Addr()}
	runRoundTrip(t, "kcat", broker, client)
	// On a topic of its own, so that it runs whatever the round trip did.
	newClientSteps(t, "kcat").step("metadata listing (kcat -L)", false, func(t *testing.T) {
		rawCreateTopics(t, broker.Addr(), roundTripPartitions, kcatListingTopic)
		client.checkListing(t, kcatListingTopic)
	})
}

// kcatListingTopic is the topic whose listing kcat -L is checked on.
const kcatListingTopic = "kcat-listing"

type kcatClient struct {
	program string
	address string
}

func (c *kcatClient) codecs() []string { return codecsAll }

func (c *kcatClient) run(t testing.TB, stdin []byte, args ...string) []byte {
	t.Helper()
	return runOutsideTool(t, stdin, c.program, append([]string{"-b", c.address}, args...)...)
}

func (c *kcatClient) createTopic(t *testing.T, topic string) {
	rawCreateTopics(t, c.address, roundTripPartitions, topic)
}

// kcatListing is the part of `kcat -L -J` this test reads.
type kcatListing struct {
	Brokers []struct {
		ID   int32  `json:"id"`
		Name string `json:"name"`
	} `json:"brokers"`
	Topics []struct {
		Topic      string `json:"topic"`
		Error      string `json:"error"`
		Partitions []struct {
			Partition int32  `json:"partition"`
			Leader    int32  `json:"leader"`
			Error     string `json:"error"`
		} `json:"partitions"`
	} `json:"topics"`
}

// checkListing: `kcat -L` names this broker and lists the topic with
// partitions 0..n-1, each led by a broker.
func (c *kcatClient) checkListing(t *testing.T, topic string) {
	t.Helper()
	output := c.run(t, nil, "-L", "-J", "-t", topic)
	var listing kcatListing
	if err := json.Unmarshal(output, &listing); err != nil {
		t.Fatalf("kcat -L -J output: %v\n%s", err, output)
	}
	if len(listing.Brokers) != 1 || listing.Brokers[0].Name != c.address {
		t.Errorf("kcat -L brokers %+v, want one at %s", listing.Brokers, c.address)
	}
	if len(listing.Topics) != 1 || listing.Topics[0].Topic != topic || listing.Topics[0].Error != "" {
		t.Fatalf("kcat -L topics %+v, want %q without error", listing.Topics, topic)
	}
	var partitions []int32
	for _, p := range listing.Topics[0].Partitions {
		partitions = append(partitions, p.Partition)
		if p.Error != "" || p.Leader < 0 {
			t.Errorf("partition %d: leader %d, error %q", p.Partition, p.Leader, p.Error)
		}
	}
	slices.Sort(partitions)
	if !slices.Equal(partitions, []int32{0, 1, 2}) {
		t.Errorf("kcat -L lists partitions %v, want [0 1 2]", partitions)
	}
}

// produce runs one kcat per codec and per stretch of records that agree
// on -Z (tombstones need it: it turns an empty line value into null), so
// every run keeps the plan's order. kcat does not say where records
// landed; the order check takes that from where they are read.
func (c *kcatClient) produce(t *testing.T, topic string, plan []plannedRecord) []producedRecord {
	var produced []producedRecord
	for _, run := range kcatRuns(plan) {
		args := []string{"-P", "-t", topic, "-K:", "-z", run[0].Codec, "-X", "enable.idempotence=true"}
		for _, h := range run[0].Headers {
			args = append(args, "-H", h.Key+"="+string(h.Value))
		}
		if run[0].Value == nil {
			args = append(args, "-Z")
		}
		var lines bytes.Buffer
		for _, r := range run {
			lines.Write(kcatLine(t, r, run[0].Headers))
		}
		c.run(t, lines.Bytes(), args...)
		for _, r := range run {
			produced = append(produced, producedRecord{record: r.record, Partition: -1, Offset: -1})
		}
	}
	return produced
}

// kcatRuns splits plan into consecutive runs with one codec, one set of
// headers, and all tombstones or none.
func kcatRuns(plan []plannedRecord) [][]plannedRecord {
	var runs [][]plannedRecord
	for i, r := range plan {
		if i == 0 || r.Codec != plan[i-1].Codec || (r.Value == nil) != (plan[i-1].Value == nil) ||
			headersDiffer(r.Headers, plan[i-1].Headers) {
			runs = append(runs, nil)
		}
		runs[len(runs)-1] = append(runs[len(runs)-1], r)
	}
	return runs
}

func headersDiffer(a, b []header) bool {
	return !slices.EqualFunc(a, b, func(x, y header) bool { return x.Key == y.Key && bytes.Equal(x.Value, y.Value) })
}

// kcatLine is r as kcat -K: reads it: "key:value", or just "value" for a
// null key. The plan's records are built to fit: no newline anywhere, no
// colon in keys or in the values of null-keyed records, and the run's
// headers.
func kcatLine(t *testing.T, r plannedRecord, runHeaders []header) []byte {
	if bytes.ContainsAny(r.Key, ":\n") || bytes.ContainsRune(r.Value, '\n') ||
		(r.Key == nil && bytes.ContainsRune(r.Value, ':')) || headersDiffer(r.Headers, runHeaders) {
		t.Fatalf("kcat cannot send %s", r.String())
	}
	var line []byte
	if r.Key != nil {
		line = append(append(line, r.Key...), ':')
	}
	line = append(line, r.Value...)
	return append(line, '\n')
}

// consume reads every partition from the beginning to its end (-e).
func (c *kcatClient) consume(t *testing.T, topic string, count int) []consumedRecord {
	output := c.run(t, nil, "-C", "-t", topic, "-e", "-o", "beginning", "-f", kcatFormat)
	var consumed []consumedRecord
	for line := range bytes.Lines(output) {
		r, err := parseKcatLine(bytes.TrimSuffix(line, []byte("\n")))
		if err != nil {
			t.Fatalf("kcat output line %q: %v", tail(line, 200), err)
		}
		consumed = append(consumed, r)
	}
	return consumed
}

// parseKcatLine reads one kcatFormat line.
func parseKcatLine(line []byte) (consumedRecord, error) {
	fields := bytes.Split(line, []byte("\t"))
	if len(fields) != 7 {
		return consumedRecord{}, fmt.Errorf("%d fields, want 7", len(fields))
	}
	numbers := make([]int64, 0, 4)
	for _, i := range []int{0, 1, 2, 4} {
		n, err := strconv.ParseInt(string(fields[i]), 10, 64)
		if err != nil {
			return consumedRecord{}, fmt.Errorf("field %d: %v", i, err)
		}
		numbers = append(numbers, n)
	}
	r := consumedRecord{Partition: int32(numbers[0]), Offset: numbers[1]}
	var err error
	if r.Key, err = kcatBytes(fields[3], numbers[2]); err != nil {
		return consumedRecord{}, fmt.Errorf("key: %v", err)
	}
	if r.Value, err = kcatBytes(fields[5], numbers[3]); err != nil {
		return consumedRecord{}, fmt.Errorf("value: %v", err)
	}
	if len(fields[6]) > 0 {
		for _, pair := range strings.Split(string(fields[6]), ",") {
			key, value, ok := strings.Cut(pair, "=")
			if !ok {
				return consumedRecord{}, fmt.Errorf("header %q has no =", pair)
			}
			h := header{Key: key, Value: []byte(value)}
			if value == "NULL" {
				h.Value = nil // kcat prints a null header value as NULL
			}
			r.Headers = append(r.Headers, h)
		}
	}
	return r, nil
}

// kcatBytes is a printed key or value given its printed length (-1: null).
func kcatBytes(printed []byte, length int64) ([]byte, error) {
	if length < 0 {
		return nil, nil
	}
	if int64(len(printed)) != length {
		return nil, fmt.Errorf("%d bytes printed, length says %d", len(printed), length)
	}
	return bytes.Clone(printed), nil
}

// kcatOffsetLine is one answer of kcat -Q: "topic [partition] offset N".
var kcatOffsetLine = regexp.MustCompile(`^(\S+) \[(\d+)\] offset (-?\d+)$`)

// listOffsets asks kcat -Q for each partition's offset at the special
// timestamps -2 (earliest) and -1 (latest), one query each: kcat keeps
// one entry per partition, so two in one call would collapse.
func (c *kcatClient) listOffsets(t *testing.T, topic string) (earliest, latest map[int32]int64) {
	earliest, latest = map[int32]int64{}, map[int32]int64{}
	for partition := range int32(roundTripPartitions) {
		for _, query := range []struct {
			timestamp string
			into      map[int32]int64
		}{{"-2", earliest}, {"-1", latest}} {
			output := strings.TrimSpace(string(c.run(t, nil, "-Q", "-t", fmt.Sprintf("%s:%d:%s", topic, partition, query.timestamp))))
			match := kcatOffsetLine.FindStringSubmatch(output)
			if match == nil || match[1] != topic || match[2] != strconv.Itoa(int(partition)) {
				t.Fatalf("kcat -Q %s:%d:%s answered %q", topic, partition, query.timestamp, output)
			}
			offset, _ := strconv.ParseInt(match[3], 10, 64)
			query.into[partition] = offset
		}
	}
	return earliest, latest
}

// hash is librdkafka's default partitioner, consistent_random: CRC-32 of
// the key modulo the partition count; random for null and empty keys.
func (c *kcatClient) hash(key []byte, partitions int32) (int32, bool) {
	if len(key) == 0 {
		return 0, false
	}
	return int32(crc32.ChecksumIEEE(key) % uint32(partitions)), true
}
