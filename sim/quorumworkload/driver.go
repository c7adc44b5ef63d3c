package quorumworkload

import (
	"fmt"

	"sluice/core/metadata"
)

// The driver proposes records with unique values ("v1", "v2", ...) to
// whichever node leads, at exponentially distributed intervals, as a
// controller does when requests come in. Sometimes a proposal carries
// several records (one batch).

// recordsPerProposalMax bounds the records of one proposal.
const recordsPerProposalMax = 3

// startDriver begins proposing; it stops when the safety phase ends.
func (r *run) startDriver() {
	r.kernel.Every(r.rng, r.settings.proposeEvery, "workload.propose", func() bool { return r.stopProposing }, func() {
		r.propose(1+r.rng.IntN(recordsPerProposalMax), nil)
	})
}

// leader is the node that leads the newest epoch, if any does.
func (r *run) leader() *node {
	var best *node
	bestEpoch := int32(-1)
	for _, n := range r.nodes {
		if !n.up || !n.quorum.IsLeader() {
			continue
		}
		if _, epoch, _ := n.quorum.Leader(); epoch > bestEpoch {
			best, bestEpoch = n, epoch
		}
	}
	return best
}

// propose proposes count new records to the leader; done, if not nil, gets
// the outcome. With no leader it reports false at once.
func (r *run) propose(count int, done func(ok bool)) bool {
	leader := r.leader()
	if leader == nil {
		r.counts.noLeader++
		return false
	}
	values := make([]string, count)
	records := make([]metadata.Record, count)
	for i := range values {
		r.nextValue++
		values[i] = fmt.Sprintf("v%d", r.nextValue)
		value := values[i]
		records[i] = metadata.Record{Config: &metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, ResourceName: "-", Name: recordName, Value: &value}}
	}
	r.counts.proposed++
	leader.quorum.Propose(records, func(lastOffset int64, err error) {
		if err != nil {
			r.counts.failed++
		} else {
			r.counts.acknowledged++
			for i, value := range values {
				offset := lastOffset - int64(count-1-i)
				r.checker.committed(offset, value, "acknowledged")
				r.checker.acknowledged[offset] = value
			}
		}
		if done != nil {
			done(err == nil)
		}
	})
	return true
}
