package replica

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/core/producer"
)

// Admin operations on a partition: OffsetForLeaderEpoch and
// DescribeProducers (DeleteRecords is in delete_records.go).

// EndOffsetForEpoch answers OffsetForLeaderEpoch for this partition
// (KIP-101, KIP-279): the largest leader epoch at or below requested that
// wrote to the log, and the offset where it ended (the next epoch's first
// offset, or the log end for the latest). A requested epoch below every
// known one gets itself and the log's first epoch offset; one above the
// current leader epoch, or -1, gets (-1, -1). currentLeaderEpoch, when not
// -1, fences a client with stale metadata (KIP-320), as Read does. Only
// the leader answers; see endOffsetForEpoch (leader_fetch.go) for how the
// current epoch is answered before its first batch.
func (p *Partition) EndOffsetForEpoch(currentLeaderEpoch, requested int32) (int32, int64, error) {
	if err := p.checkLeaderEpoch(currentLeaderEpoch); err != nil {
		return -1, -1, err
	}
	if !p.IsLeader() {
		return -1, -1, kerr.NotLeaderForPartition
	}
	epoch, end := p.endOffsetForEpoch(requested)
	return epoch, end, nil
}

// ActiveProducers answers DescribeProducers for this partition (KIP-664):
// the idempotent producers whose state the leader keeps to refuse
// duplicates, sorted by producer id, with their last batches. Only the
// leader answers: a follower's state lags its log.
func (p *Partition) ActiveProducers() ([]producer.Entry, error) {
	if !p.IsLeader() {
		return nil, kerr.NotLeaderForPartition
	}
	return p.producers.Entries(), nil
}
