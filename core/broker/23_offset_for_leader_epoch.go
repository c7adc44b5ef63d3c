package broker

// OffsetForLeaderEpoch (key 23), versions 2-4.
//
// For each partition, the largest leader epoch at or below the one asked
// about that wrote to the log, and the offset where it ended (KIP-101,
// refined by KIP-279): a consumer uses it after a leader change to see
// whether the log was truncated below its position (KIP-320), and a
// follower may use it to find where its log diverges from the leader's
// (Sluice's followers learn that from the Fetch itself, DivergingEpoch,
// KIP-279; see follower_fetch.go). Only the leader
// answers (NOT_LEADER_OR_FOLLOWER elsewhere). CurrentLeaderEpoch, when not
// -1, fences a caller with stale metadata: FENCED_LEADER_EPOCH when older
// than the leader's, UNKNOWN_LEADER_EPOCH when newer. See
// replica.EndOffsetForEpoch for the exact answers.
//
// Version notes: Kafka 4 serves v2 and up. v2 brought CurrentLeaderEpoch;
// v3 ReplicaID (-1 for consumers, a broker id for followers; both get the
// same answer from the leader); v4 is flexible.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 23, advertisedMin: 2, honouredMin: 2, max: 4, handle: (*Broker).handleOffsetForLeaderEpoch})
}

func (b *Broker) handleOffsetForLeaderEpoch(x *exchange) {
	req := x.request.Body.(*kmsg.OffsetForLeaderEpochRequest)
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
		rt.Topic = t.Topic
		for _, rp := range t.Partitions {
			answer := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			answer.Partition = rp.Partition
			p, err := b.leaderPartition(partitionKey{topic: t.Topic, partition: rp.Partition})
			if err == nil {
				answer.LeaderEpoch, answer.EndOffset, err = p.EndOffsetForEpoch(rp.CurrentLeaderEpoch, rp.LeaderEpoch)
			}
			answer.ErrorCode = errorCode(err)
			rt.Partitions = append(rt.Partitions, answer)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	x.respond(resp)
}
