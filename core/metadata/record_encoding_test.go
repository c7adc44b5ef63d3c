package metadata

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"pgregory.net/rapid"
)

// encodeWithJSON is the definition of the format.
func encodeWithJSON(t interface{ Fatalf(string, ...any) }, r Record) []byte {
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("json.Marshal(%+v): %v", r, err)
	}
	return b
}

// TestEncodeAgreesWithJSON: for any record, Encode writes exactly
// json.Marshal's bytes, and the fast path writes every record whose
// strings need no escaping.
func TestEncodeAgreesWithJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := randomRecord(t)
		want := encodeWithJSON(t, r)
		if got := r.Encode(); !bytes.Equal(got, want) {
			t.Fatalf("Encode wrote %s, json.Marshal %s", got, want)
		}
		prefix := []byte("prefix")
		if got := r.AppendEncode(prefix[:len(prefix):len(prefix)]); !bytes.Equal(got, append(prefix, want...)) {
			t.Fatalf("AppendEncode wrote %s, want prefix then %s", got, want)
		}
		roomy := append(make([]byte, 0, 4096), prefix...) // a fallback overwrites what the fast path began
		if got := r.AppendEncode(roomy); !bytes.Equal(got, append(prefix, want...)) {
			t.Fatalf("AppendEncode with spare capacity wrote %s, want prefix then %s", got, want)
		}
		_, fast := appendEncoded(nil, r)
		plain := !bytes.ContainsAny(want, `\<>&`) && !bytes.ContainsFunc(want, func(c rune) bool { return c < 0x20 || c >= 0x7f })
		if fast != plain {
			t.Fatalf("fast path took it: %v, plain ASCII: %v, for %s", fast, plain, want)
		}
	})
}

// TestEncodeEdgeRecords pins the forms the fast path must get exactly
// right: the integer limits, nil and empty slices, omitted fields, no
// record kind or two of them.
func TestEncodeEdgeRecords(t *testing.T) {
	leader := int32(math.MinInt32)
	value := "compact"
	for _, r := range []Record{
		{},
		{NoOp: &NoOpRecord{}, BrokerFence: &BrokerFenceRecord{BrokerID: 1}},
		{RegisterBroker: &RegisterBrokerRecord{BrokerID: 3, IncarnationID: [16]byte{255, 0, 7}, BrokerEpoch: math.MaxInt64, Host: "n3", Port: 9092, Rack: "r1"}},
		{RegisterBroker: &RegisterBrokerRecord{BrokerID: 3, BrokerEpoch: math.MinInt64}},
		{BrokerFence: &BrokerFenceRecord{BrokerID: 1, BrokerEpoch: 12, Fenced: true}},
		{Topic: &TopicRecord{Name: "tópico", ID: TopicID{1, 2, 3}}},
		{Topic: &TopicRecord{Name: "a~b\x7f", ID: TopicID{1, 2, 3}}},
		{Partition: &PartitionRecord{TopicID: TopicID{9}, Partition: 2, Replicas: []int32{1, 2, 3}, ISR: []int32{}, Leader: -1, LeaderEpoch: math.MaxInt32}},
		{Partition: &PartitionRecord{TopicID: TopicID{9}, Partition: 2, AddingReplicas: []int32{}, RemovingReplicas: []int32{4}}},
		{PartitionChange: &PartitionChangeRecord{TopicID: TopicID{4}, Partition: 1, Leader: &leader, ISR: []int32{2}, Replicas: []int32{2, 3}}},
		{PartitionChange: &PartitionChangeRecord{TopicID: TopicID{4}, Partition: 1, ISR: []int32{}, Unclean: true}},
		{RemoveTopic: &RemoveTopicRecord{TopicID: TopicID{5}}},
		{Config: &ConfigRecord{ResourceType: ResourceTopic, ResourceName: "t", Name: ConfigCleanupPolicy, Value: &value}},
		{Config: &ConfigRecord{ResourceType: math.MinInt8, ResourceName: "1", Name: "x"}},
		{ProducerIDs: &ProducerIDsRecord{BrokerID: 2, BrokerEpoch: 3, NextProducerID: math.MinInt64}},
	} {
		if got, want := r.Encode(), encodeWithJSON(t, r); !bytes.Equal(got, want) {
			t.Errorf("Encode wrote %s, json.Marshal %s", got, want)
		}
	}
}
