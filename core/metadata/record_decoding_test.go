package metadata

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// decodeWithJSON is the definition of the format: what encoding/json makes
// of b, with DecodeRecord's one-kind rule.
func decodeWithJSON(b []byte) (Record, bool) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil || r.count() != 1 {
		return Record{}, false
	}
	return r, true
}

// TestDecodeEncodedAgreesWithJSON: for any record, the fast path decodes
// Encode's bytes to exactly what encoding/json does (nil and empty slices
// told apart), and it takes every encoding without an escaped string.
func TestDecodeEncodedAgreesWithJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := randomRecord(t).Encode()
		want, ok := decodeWithJSON(b)
		if !ok {
			t.Fatalf("encoding/json cannot decode %s", b)
		}
		got, fast := decodeEncoded(b)
		if escaped := bytes.Contains(b, []byte(`\`)); fast == escaped {
			t.Fatalf("fast path took it: %v, escaped strings: %v, for %s", fast, escaped, b)
		}
		if !fast {
			return
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("fast path differs from encoding/json for %s (-json +fast):\n%s", b, diff)
		}
	})
}

// TestDecodeEncodedLeavesOtherFormsToJSON: bytes that are valid JSON but
// not Encode's form go to encoding/json, and DecodeRecord's answer is its.
func TestDecodeEncodedLeavesOtherFormsToJSON(t *testing.T) {
	for _, input := range []string{
		`{"no_op":{}} `, // trailing space
		`{ "no_op":{}}`, // space inside
		`{"broker_fence":{"broker_id":01,"broker_epoch":1,"fenced":true}}`,      // leading zero
		`{"broker_fence":{"broker_id":-0,"broker_epoch":1,"fenced":true}}`,      // minus zero
		`{"broker_fence":{"broker_id":1.0,"broker_epoch":1,"fenced":true}}`,     // a fraction
		`{"broker_fence":{"broker_epoch":1,"broker_id":1,"fenced":true}}`,       // fields reordered
		`{"broker_fence":{"broker_id":2147483648,"broker_epoch":1,"fenced":1}}`, // int32 overflow
		`{"broker_fence":{"broker_id":1,"broker_epoch":1,"fenced":true,"x":1}}`, // unknown field
		`{"topic":{"name":"a\"b","id":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}}`,
		`{"topic":{"name":"x","id":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,256]}}`, // not a byte
		`{"topic":{"name":"x","id":[1,2,3]}}`,                                   // short id
		`{"topic":{"name":"\u00e9","id":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}}`,
		"{\"topic\":{\"name\":\"\xff\",\"id\":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}}", // bad UTF-8
		`{"partition_change":{"topic_id":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16],"partition":0,"isr":[1,]}}`,
		`{"no_op":{},"broker_fence":{"broker_id":1,"broker_epoch":1,"fenced":true}}`, // two kinds
		`{}`,
		``,
	} {
		if _, fast := decodeEncoded([]byte(input)); fast {
			t.Errorf("fast path took %q, which Encode never writes", input)
		}
		want, wantErr := func() (Record, error) {
			var r Record
			err := json.Unmarshal([]byte(input), &r)
			return r, err
		}()
		got, err := DecodeRecord([]byte(input))
		if wantErr == nil && want.count() == 1 {
			if err != nil || !cmp.Equal(want, got) {
				t.Errorf("DecodeRecord(%q) = %+v, %v; encoding/json gives %+v", input, got, err, want)
			}
		} else if err == nil {
			t.Errorf("DecodeRecord(%q) accepted what encoding/json refuses", input)
		}
	}
}

// TestDecodeEncodedTakesEveryKindAndTheIntegerLimits pins the forms the
// simulator's clusters write most, and the integer bounds.
func TestDecodeEncodedTakesEveryKindAndTheIntegerLimits(t *testing.T) {
	leader := int32(math.MinInt32)
	value := "compact"
	for _, r := range []Record{
		{RegisterBroker: &RegisterBrokerRecord{BrokerID: 3, IncarnationID: [16]byte{255, 0, 7}, BrokerEpoch: math.MaxInt64, Host: "n3", Port: 9092, Rack: "r1"}},
		{RegisterBroker: &RegisterBrokerRecord{BrokerID: 3, BrokerEpoch: math.MinInt64}},
		{BrokerFence: &BrokerFenceRecord{BrokerID: 1, BrokerEpoch: 12, Fenced: true}},
		{Topic: &TopicRecord{Name: "tópico", ID: TopicID{1, 2, 3}}},
		{Partition: &PartitionRecord{TopicID: TopicID{9}, Partition: 2, Replicas: []int32{1, 2, 3}, ISR: []int32{}, Leader: -1, LeaderEpoch: math.MaxInt32}},
		{Partition: &PartitionRecord{TopicID: TopicID{9}, Partition: 2}},
		{PartitionChange: &PartitionChangeRecord{TopicID: TopicID{4}, Partition: 1, Leader: &leader, ISR: []int32{2}, Replicas: []int32{2, 3}}},
		{PartitionChange: &PartitionChangeRecord{TopicID: TopicID{4}, Partition: 1}},
		{PartitionChange: &PartitionChangeRecord{TopicID: TopicID{4}, Partition: 1, Leader: &leader, ISR: []int32{2}, Unclean: true}},
		{Partition: &PartitionRecord{TopicID: TopicID{9}, Partition: 2, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1, LeaderEpoch: 4, UncleanEpoch: 3}},
		{RemoveTopic: &RemoveTopicRecord{TopicID: TopicID{5}}},
		{Config: &ConfigRecord{ResourceType: ResourceTopic, ResourceName: "t", Name: ConfigCleanupPolicy, Value: &value}},
		{Config: &ConfigRecord{ResourceType: math.MinInt8, ResourceName: "1", Name: "x"}},
		{ProducerIDs: &ProducerIDsRecord{BrokerID: 2, BrokerEpoch: 3, NextProducerID: 1000}},
		{NoOp: &NoOpRecord{}},
	} {
		b := r.Encode()
		got, fast := decodeEncoded(b)
		if !fast {
			t.Errorf("fast path refused %s", b)
			continue
		}
		want, _ := decodeWithJSON(b)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("fast path differs from encoding/json for %s (-json +fast):\n%s", b, diff)
		}
	}
}

// FuzzDecodeEncoded: whatever the fast path accepts, encoding/json decodes
// to the same record.
func FuzzDecodeEncoded(f *testing.F) {
	leader := int32(2)
	for _, r := range []Record{
		{PartitionChange: &PartitionChangeRecord{TopicID: TopicID{4}, Partition: 1, Leader: &leader, ISR: []int32{2}}},
		{BrokerFence: &BrokerFenceRecord{BrokerID: 1, BrokerEpoch: 12}},
		{Partition: &PartitionRecord{TopicID: TopicID{9}, Replicas: []int32{1, 2}, ISR: []int32{1}}},
		{RegisterBroker: &RegisterBrokerRecord{BrokerID: 3, Host: "h", Port: 1}},
		{Config: &ConfigRecord{ResourceType: ResourceBroker, ResourceName: "1", Name: "x"}},
		{NoOp: &NoOpRecord{}},
	} {
		f.Add(r.Encode())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, fast := decodeEncoded(b)
		if !fast {
			return
		}
		want, ok := decodeWithJSON(b)
		if !ok {
			t.Fatalf("fast path took %q, which encoding/json refuses", b)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("fast path differs from encoding/json for %q (-json +fast):\n%s", b, diff)
		}
	})
}

// randomRecord draws one record of any kind, with field values that
// reach the edges: extreme integers, nil and empty slices, and strings
// that need escaping or hold non-ASCII text.
func randomRecord(t *rapid.T) Record {
	int32s := func(label string) []int32 {
		switch rapid.IntRange(0, 2).Draw(t, label+" form") {
		case 0:
			return nil
		case 1:
			return []int32{}
		}
		return rapid.SliceOfN(rapid.Int32(), 1, 5).Draw(t, label)
	}
	text := func(label string) string {
		return rapid.OneOf(rapid.SampledFrom([]string{"", "host-1", "tópico", "a<b", `q"uote`, "tab\t", "\u2028"}), rapid.String()).Draw(t, label)
	}
	id := func(label string) [16]byte {
		var id [16]byte
		copy(id[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, label))
		return id
	}
	switch rapid.IntRange(0, 9).Draw(t, "kind") {
	case 0:
		return Record{RegisterBroker: &RegisterBrokerRecord{
			BrokerID: rapid.Int32().Draw(t, "broker"), IncarnationID: id("incarnation"), BrokerEpoch: rapid.Int64().Draw(t, "epoch"),
			Host: text("host"), Port: rapid.Int32().Draw(t, "port"), Rack: text("rack"),
		}}
	case 1:
		return Record{BrokerFence: &BrokerFenceRecord{BrokerID: rapid.Int32().Draw(t, "broker"), BrokerEpoch: rapid.Int64().Draw(t, "epoch"), Fenced: rapid.Bool().Draw(t, "fenced")}}
	case 2:
		return Record{Topic: &TopicRecord{Name: text("name"), ID: id("id")}}
	case 3:
		return Record{Partition: &PartitionRecord{
			TopicID: id("topic"), Partition: rapid.Int32().Draw(t, "partition"), Replicas: int32s("replicas"), ISR: int32s("isr"),
			Leader: rapid.Int32().Draw(t, "leader"), LeaderEpoch: rapid.Int32().Draw(t, "leader epoch"), PartitionEpoch: rapid.Int32().Draw(t, "partition epoch"),
			UncleanEpoch: rapid.Int32().Draw(t, "unclean epoch"), AddingReplicas: int32s("adding"), RemovingReplicas: int32s("removing"),
			Deposed: int32s("deposed"),
		}}
	case 4:
		change := &PartitionChangeRecord{TopicID: id("topic"), Partition: rapid.Int32().Draw(t, "partition"), ISR: int32s("isr"), Replicas: int32s("replicas"),
			AddingReplicas: int32s("adding"), RemovingReplicas: int32s("removing")}
		if rapid.Bool().Draw(t, "new leader") {
			leader := rapid.Int32().Draw(t, "leader")
			change.Leader = &leader
		}
		change.Unclean = rapid.Bool().Draw(t, "unclean")
		return Record{PartitionChange: change}
	case 5:
		return Record{RemoveTopic: &RemoveTopicRecord{TopicID: id("topic")}}
	case 6:
		config := &ConfigRecord{ResourceType: rapid.Int8().Draw(t, "resource type"), ResourceName: text("resource"), Name: text("name")}
		if rapid.Bool().Draw(t, "set") {
			value := text("value")
			config.Value = &value
		}
		return Record{Config: config}
	case 8:
		return Record{BrokerCaughtUp: &BrokerCaughtUpRecord{BrokerID: rapid.Int32().Draw(t, "broker"), BrokerEpoch: rapid.Int64().Draw(t, "epoch")}}
	case 7:
		return Record{ProducerIDs: &ProducerIDsRecord{BrokerID: rapid.Int32().Draw(t, "broker"), BrokerEpoch: rapid.Int64().Draw(t, "epoch"), NextProducerID: rapid.Int64().Draw(t, "next")}}
	}
	return Record{NoOp: &NoOpRecord{}}
}
