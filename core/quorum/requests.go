package quorum

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/wire"
)

// HandleRequest routes any request the quorum serves to its handler and
// reports whether it did: Vote, BeginQuorumEpoch, EndQuorumEpoch,
// FetchSnapshot, DescribeQuorum, and a Fetch of the metadata partition. A
// node's controller listener passes every request through it first. done
// receives the answer, whose version is the request's: at once (before
// HandleRequest returns) or later (a vote waits for its quorum-state write,
// a fetch may be held for new records), so a listener must keep answers in
// request order itself, as Kafka does on a connection. done must be
// finished with an answer when it returns (encode it, as a listener does):
// the quorum may build its next answer in the same memory.
func (q *Quorum) HandleRequest(req kmsg.Request, done func(kmsg.Response)) bool {
	switch r := req.(type) {
	case *kmsg.VoteRequest:
		q.HandleVote(r, func(resp *kmsg.VoteResponse) { done(resp) })
	case *kmsg.BeginQuorumEpochRequest:
		q.HandleBeginQuorumEpoch(r, func(resp *kmsg.BeginQuorumEpochResponse) { done(resp) })
	case *kmsg.EndQuorumEpochRequest:
		q.HandleEndQuorumEpoch(r, func(resp *kmsg.EndQuorumEpochResponse) { done(resp) })
	case *kmsg.FetchSnapshotRequest:
		q.HandleFetchSnapshot(r, func(resp *kmsg.FetchSnapshotResponse) { done(resp) })
	case *kmsg.DescribeQuorumRequest:
		q.HandleDescribeQuorum(r, func(resp *kmsg.DescribeQuorumResponse) { done(resp) })
	case *kmsg.FetchRequest:
		if !IsMetadataFetch(r) {
			return false
		}
		q.HandleFetch(r, wire.ResponderFunc(done))
	default:
		return false
	}
	return true
}

// IsMetadataFetch reports whether a Fetch asks for the metadata partition
// (by name before v13, by topic id from v13), and nothing else.
func IsMetadataFetch(req *kmsg.FetchRequest) bool {
	_, ok := metadataFetchPartition(req)
	return ok
}

// metadataFetchPartition returns the one partition a metadata Fetch asks
// for, reporting false if the request asks for anything else too. It
// points into req rather than copying the partition: every fetch the
// leader answers goes through here twice.
func metadataFetchPartition(req *kmsg.FetchRequest) (*kmsg.FetchRequestTopicPartition, bool) {
	if len(req.Topics) != 1 || len(req.Topics[0].Partitions) != 1 {
		return nil, false
	}
	t := &req.Topics[0]
	byName := req.Version < 13 && t.Topic == MetadataTopic
	byID := req.Version >= 13 && t.TopicID == MetadataTopicID
	if (!byName && !byID) || t.Partitions[0].Partition != 0 {
		return nil, false
	}
	return &t.Partitions[0], true
}

// fetchReplicaID is who sent a Fetch: ReplicaState.ID from v15, ReplicaID
// before.
func fetchReplicaID(req *kmsg.FetchRequest) int32 {
	if req.Version >= 15 {
		return req.ReplicaState.ID
	}
	return req.ReplicaID
}
