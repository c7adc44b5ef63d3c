package broker

// The leader's side of a follower's Fetch: each partition is answered by
// replica.ServeFollowerFetch, which fences the follower by leader epoch and
// broker epoch, checks its log against the leader's epochs (an answer with
// DivergingEpoch goes at once), records its fetch offset as its log end
// (which may grow the ISR and move the high watermark), and reads up to
// the log end. A follower's fetch that finds nothing new long-polls like a
// consumer's, and wakes on the next append; a high watermark move alone
// does not answer it (the follower learns the watermark from its next
// answer, as in Kafka).

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/replica"
)

// readForFollower serves one partition to a follower into answer, and
// reports the bytes read and whether the answer must go at once (an error
// or a divergence).
func (f *pendingFetch) readForFollower(topic string, rp *kmsg.FetchRequestTopicPartition, limit int, atLeastOne bool, answer *kmsg.FetchResponseTopicPartition) (int, bool) {
	p, err := f.broker.leaderPartition(partitionKey{topic: topic, partition: rp.Partition})
	if err != nil {
		answer.ErrorCode = errorCode(err)
		return 0, true
	}
	result, err := p.ServeFollowerFetch(replica.FollowerFetch{
		ReplicaID:          f.replicaID,
		BrokerEpoch:        f.replicaEpoch,
		CurrentLeaderEpoch: rp.CurrentLeaderEpoch,
		FetchOffset:        rp.FetchOffset,
		LastFetchedEpoch:   rp.LastFetchedEpoch,
		LogStartOffset:     rp.LogStartOffset,
		MaxBytes:           limit,
		AtLeastOne:         atLeastOne,
	})
	answer.HighWatermark = result.HighWatermark
	answer.LastStableOffset = result.HighWatermark
	answer.LogStartOffset = result.LogStartOffset
	if err != nil {
		answer.ErrorCode = errorCode(err)
		return 0, true
	}
	if result.DivergingEpoch >= 0 {
		answer.DivergingEpoch.Epoch = result.DivergingEpoch
		answer.DivergingEpoch.EndOffset = result.DivergingEndOffset
		return 0, true
	}
	if result.Records != nil {
		answer.RecordBatches = result.Records
	}
	return len(result.Records), false
}
