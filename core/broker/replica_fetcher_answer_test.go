package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/replica"
)

// TestAnsweredInOrder: a fetch answer is matched to the partitions sent by
// position only when it holds exactly those partitions in that order;
// anything else (another order, one missing, one more) goes through the
// map by partition.
func TestAnsweredInOrder(t *testing.T) {
	a, b := &replica.Partition{TopicID: [16]byte{1}}, &replica.Partition{TopicID: [16]byte{2}}
	sent := []sentPartition{
		{key: partitionKey{topic: "a", partition: 0}, partition: a},
		{key: partitionKey{topic: "a", partition: 1}, partition: a},
		{key: partitionKey{topic: "b", partition: 0}, partition: b},
	}
	answer := func(parts ...[2]int32) *kmsg.FetchResponse {
		resp := kmsg.NewPtrFetchResponse()
		for _, p := range parts {
			id := [16]byte{byte(p[0])}
			if n := len(resp.Topics); n == 0 || resp.Topics[n-1].TopicID != id {
				topic := kmsg.NewFetchResponseTopic()
				topic.TopicID = id
				resp.Topics = append(resp.Topics, topic)
			}
			partition := kmsg.NewFetchResponseTopicPartition()
			partition.Partition = p[1]
			topic := &resp.Topics[len(resp.Topics)-1]
			topic.Partitions = append(topic.Partitions, partition)
		}
		return resp
	}
	for _, c := range []struct {
		name    string
		resp    *kmsg.FetchResponse
		inOrder bool
	}{
		{"as sent", answer([2]int32{1, 0}, [2]int32{1, 1}, [2]int32{2, 0}), true},
		{"another order", answer([2]int32{1, 1}, [2]int32{1, 0}, [2]int32{2, 0}), false},
		{"one missing", answer([2]int32{1, 0}, [2]int32{1, 1}), false},
		{"one more", answer([2]int32{1, 0}, [2]int32{1, 1}, [2]int32{2, 0}, [2]int32{2, 0}), false},
		{"another topic", answer([2]int32{1, 0}, [2]int32{1, 1}, [2]int32{3, 0}), false},
		{"empty", answer(), false},
	} {
		if got := answeredInOrder(sent, c.resp); got != c.inOrder {
			t.Errorf("%s: in order %v, want %v", c.name, got, c.inOrder)
		}
	}
	if !answeredInOrder(nil, answer()) {
		t.Errorf("nothing sent, nothing answered: not in order")
	}
}
