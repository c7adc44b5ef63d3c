package compat

import (
	"testing"
	"time"
)

const (
	// clientTimeout bounds each step of a round trip (create, produce,
	// consume, list offsets): generous for a loopback broker, and small
	// enough that a hang fails the test well inside the package budget.
	clientTimeout = 30 * time.Second
	// roundTripTopic is the topic each round trip uses; every client
	// talks to its own broker, so the name can be shared.
	roundTripTopic = "round-trip"
)

// roundTripClient is one Kafka client's way of doing each step of the
// round trip. Each method fails t itself when its client reports an error.
type roundTripClient interface {
	// codecs are the compression codecs the client can produce with.
	codecs() []string
	// createTopic creates the topic with roundTripPartitions partitions
	// and, where the client has a way, checks that its metadata lists
	// them.
	createTopic(t *testing.T, topic string)
	// produce sends plan's records in order, each batch compressed with
	// the record's codec, acks=all, and reports where each landed when
	// the client says.
	produce(t *testing.T, topic string, plan []plannedRecord) []producedRecord
	// consume reads every partition from offset 0 without a consumer
	// group until count records have arrived, in the order the client
	// delivers them.
	consume(t *testing.T, topic string, count int) []consumedRecord
	// listOffsets asks for each partition's earliest and latest offset.
	listOffsets(t *testing.T, topic string) (earliest, latest map[int32]int64)
	// hash is the client's own partition for a key.
	hash(key []byte, partitions int32) (int32, bool)
}

// The round trip's steps, named once: they are the matrix's first rows.
const (
	createStep       = "create topic, 3 partitions"
	codecsRow        = "codecs produced"
	produceStep      = "produce acks=all"
	consumeStep      = "consume by partition"
	contentStep      = "content byte for byte"
	orderStep        = "order within partition"
	partitioningStep = "key -> partition (client hash)"
	offsetsStep      = "offsets dense from 0"
	listOffsetsStep  = "list offsets earliest/latest"
)

var roundTripSteps = []string{
	createStep, codecsRow, produceStep, storedBytesStep, consumeStep,
	contentStep, orderStep, partitioningStep, offsetsStep, listOffsetsStep,
}

// storedBytesStep reads what another client produced with franz-go, the
// reference reader, so a content failure can be told apart: the bytes were
// stored wrong (the broker), or the client read right bytes wrong.
const storedBytesStep = "stored bytes exact (read by franz-go)"

// emptyReadsAsNull marks a client whose reader cannot tell an empty byte
// string from null (kafka-go decodes both as nil). Its content, order and
// offset checks compare records as it can see them; the stored-bytes step
// still checks the exact bytes, read back with franz-go.
type emptyReadsAsNull interface{ readsEmptyAsNull() }

// runRoundTrip runs the round trip every client goes through against
// broker and records each step in the client matrix under name. It
// returns the steps, so a client's own further steps are blocked too by
// a failed prerequisite.
func runRoundTrip(t *testing.T, name string, broker *Broker, client roundTripClient) *clientSteps {
	steps := newClientSteps(t, name)
	plan := roundTripPlan(client.codecs())
	var produced []producedRecord
	var consumed []consumedRecord

	steps.step(createStep, true, func(t *testing.T) {
		client.createTopic(t, roundTripTopic)
	})
	matrix.record(name, codecsRow, outcome(codecList(client.codecs())))
	steps.step(produceStep, true, func(t *testing.T) {
		produced = client.produce(t, roundTripTopic, plan)
	})
	if _, isFranzGo := client.(*franzGoClient); isFranzGo {
		matrix.record(name, storedBytesStep, outcomeMissing) // it is the reference
	} else {
		steps.step(storedBytesStep, false, func(t *testing.T) {
			stored := consumeWithFranzGo(t, broker.Addr(), roundTripTopic, roundTripPartitions, len(plan))
			reportProblems(t, "stored content", checkContent(plan, stored))
		})
	}
	steps.step(consumeStep, true, func(t *testing.T) {
		consumed = client.consume(t, roundTripTopic, len(plan))
		if len(consumed) != len(plan) {
			t.Errorf("read %d records, want %d", len(consumed), len(plan))
		}
	})
	expected := plan
	if _, ok := client.(emptyReadsAsNull); ok {
		expected, produced = asReadWithEmptyAsNull(plan, produced)
	}
	steps.step(contentStep, false, func(t *testing.T) {
		reportProblems(t, "content", checkContent(expected, consumed))
	})
	steps.step(orderStep, false, func(t *testing.T) {
		reportProblems(t, "order", checkOrder(expected, produced, consumed))
	})
	steps.step(partitioningStep, false, func(t *testing.T) {
		reportProblems(t, "partitioning", checkPartitioning(consumed, client.hash))
	})
	steps.step(offsetsStep, false, func(t *testing.T) {
		reportProblems(t, "offsets", checkOffsets(produced, consumed))
	})
	steps.step(listOffsetsStep, false, func(t *testing.T) {
		earliest, latest := client.listOffsets(t, roundTripTopic)
		reportProblems(t, "list offsets", checkListOffsets(consumed, earliest, latest))
	})
	return steps
}

// asReadWithEmptyAsNull is what a client that reads empty as null should
// see of plan and produced.
func asReadWithEmptyAsNull(plan []plannedRecord, produced []producedRecord) ([]plannedRecord, []producedRecord) {
	seenPlan := make([]plannedRecord, len(plan))
	for i, r := range plan {
		seenPlan[i] = plannedRecord{record: r.withEmptyAsNull(), Codec: r.Codec}
	}
	seenProduced := make([]producedRecord, len(produced))
	for i, r := range produced {
		seenProduced[i] = producedRecord{record: r.withEmptyAsNull(), Partition: r.Partition, Offset: r.Offset}
	}
	return seenPlan, seenProduced
}

// codecList names codecs for a step's name: "none+gzip".
func codecList(codecs []string) string {
	list := ""
	for i, codec := range codecs {
		if i > 0 {
			list += "+"
		}
		list += codec
	}
	return list
}

// groupByCodec splits plan into runs of consecutive records sharing a
// codec, in order, so a client configured per codec can send each run.
func groupByCodec(plan []plannedRecord) [][]plannedRecord {
	var groups [][]plannedRecord
	for i, r := range plan {
		if i == 0 || r.Codec != plan[i-1].Codec {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], r)
	}
	return groups
}
