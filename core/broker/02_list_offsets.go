package broker

// ListOffsets (key 2), versions 1-10.
//
// For each partition: the earliest offset (timestamp -2), the latest (-1:
// the high watermark, the end of what consumers can read), the offset of
// the record with the largest timestamp (-3, v7, KIP-734), or the first
// offset whose record timestamp is at or after a given time, found through
// the time index. A timestamp past every record answers offset -1. The
// tiered-storage specs answer as Kafka without tiered storage does: the
// earliest local offset (-4, v8) is the earliest, the latest tiered (-5,
// v9) is -1.
//
// Only a broker holding its lease from the controller (lifecycle.go)
// answers, as for consumers' Fetch (01_fetch.go): one cut off longer may
// already be replaced, and the ends it knows may no longer exist; it
// answers NOT_LEADER_OR_FOLLOWER and the client finds the new leader.
//
// Each answer carries the leader epoch of the offset it names, as
// Kafka's does (the current epoch for the latest offset, the epoch that
// wrote it otherwise; -1 with an error or no offset): a consumer that
// resets to it checks later truncations against that epoch (KIP-320).
//
// Version notes: v2 isolation level (same answer: no transactions); v4
// CurrentLeaderEpoch fencing (KIP-320) and LeaderEpoch in the answer; v6
// flexible; v7 max timestamp; v8 earliest local, v9 latest tiered (KIP-405,
// KIP-1005); v10 TimeoutMillis, which bounds only a remote-storage lookup
// in Kafka, and Sluice has none to wait for.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(&api{key: 2, advertisedMin: 1, honouredMin: 1, max: 10, handle: (*Broker).handleListOffsets})
}

func (b *Broker) handleListOffsets(x *exchange) {
	req := x.request.Body.(*kmsg.ListOffsetsRequest)
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	leased := b.lifecycle.holdsLease()
	for _, t := range req.Topics {
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		for _, rp := range t.Partitions {
			answer := kmsg.NewListOffsetsResponseTopicPartition()
			answer.Partition = rp.Partition
			answer.Offset = -1
			answer.Timestamp = -1
			answer.LeaderEpoch = -1
			p, err := b.leaderPartition(partitionKey{topic: t.Topic, partition: rp.Partition})
			if err == nil && !leased {
				err = kerr.NotLeaderForPartition
			}
			if err == nil {
				answer.Offset, answer.Timestamp, err = p.OffsetForTimestamp(rp.Timestamp, rp.CurrentLeaderEpoch)
			}
			if err == nil {
				answer.LeaderEpoch = p.ListedOffsetEpoch(rp.Timestamp, answer.Offset)
			}
			answer.ErrorCode = errorCode(err)
			rt.Partitions = append(rt.Partitions, answer)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	x.respond(resp)
}
