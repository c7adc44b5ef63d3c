package compat

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// batchesStored counts the batches partition 0 of topic holds, by a raw
// Fetch from offset 0 (kgo sends the highest version the broker serves,
// which names topics by id), and reports whether the first is compressed.
func batchesStored(ctx context.Context, t *testing.T, client *kgo.Client, topic string) (count int, compressed bool) {
	t.Helper()
	topics, err := kadm.NewClient(client).ListTopics(ctx, topic)
	if err != nil || topics[topic].Err != nil {
		t.Fatalf("metadata of %s: %v", topic, err)
	}
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxBytes = 1 << 20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, topics[topic].ID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, client)
	if err != nil || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch: %v", err)
	}
	if code := resp.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("fetch: error %d", code)
	}
	records := resp.Topics[0].Partitions[0].RecordBatches
	for len(records) >= 23 {
		length := int(binary.BigEndian.Uint32(records[8:12]))
		if len(records) < 12+length {
			break
		}
		if count == 0 {
			// The codec is in the attributes' low bits, after base
			// offset, length, leader epoch, magic and CRC.
			compressed = binary.BigEndian.Uint16(records[21:23])&0x7 != 0
		}
		count++
		records = records[12+length:]
	}
	return count, compressed
}
