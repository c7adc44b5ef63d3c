package quorum

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeQuorum (API key 55, KIP-595; v1 adds fetch timestamps, KIP-836).
// Tools (kafka-metadata-quorum) ask the leader who leads, the high
// watermark, and how far each voter and observer has replicated. A node
// that does not lead answers NOT_LEADER_OR_FOLLOWER with the leader it
// knows. Sluice answers v0-v2 (without v2's node endpoints).

// HandleDescribeQuorum describes the quorum as the leader sees it.
func (q *Quorum) HandleDescribeQuorum(req *kmsg.DescribeQuorumRequest, done func(*kmsg.DescribeQuorumResponse)) {
	resp := req.ResponseKind().(*kmsg.DescribeQuorumResponse)
	if len(req.Topics) != 1 || req.Topics[0].Topic != MetadataTopic || len(req.Topics[0].Partitions) != 1 || req.Topics[0].Partitions[0].Partition != 0 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		done(resp)
		return
	}
	topic := kmsg.NewDescribeQuorumResponseTopic()
	topic.Topic = MetadataTopic
	part := kmsg.NewDescribeQuorumResponseTopicPartition()
	part.LeaderID = q.knownLeader()
	part.LeaderEpoch = q.epoch
	part.HighWatermark = q.highWatermark
	if q.closed || !q.IsLeader() {
		part.ErrorCode = notLeaderCode
	} else {
		nowMillis := q.world.Clock.Now().UnixMilli()
		for _, id := range q.voters {
			state := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
			state.ReplicaID = id
			if id == q.config.NodeID {
				state.LogEndOffset = q.metadataLog.EndOffset()
				state.LastFetchTimestamp, state.LastCaughtUpTimestamp = nowMillis, nowMillis
			} else {
				p := q.leader.replicas[id]
				state.LogEndOffset = p.syncedEnd
				state.LastFetchTimestamp, state.LastCaughtUpTimestamp = p.lastFetchMillis, p.lastCaughtUpMillis
			}
			part.CurrentVoters = append(part.CurrentVoters, state)
		}
		for _, id := range q.leader.replicaIDs {
			p := q.leader.replicas[id]
			if p.voter {
				continue
			}
			state := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
			state.ReplicaID = id
			state.LogEndOffset = p.syncedEnd
			state.LastFetchTimestamp, state.LastCaughtUpTimestamp = p.lastFetchMillis, p.lastCaughtUpMillis
			part.Observers = append(part.Observers, state)
		}
	}
	topic.Partitions = append(topic.Partitions, part)
	resp.Topics = append(resp.Topics, topic)
	done(resp)
}
