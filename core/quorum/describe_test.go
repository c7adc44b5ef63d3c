package quorum

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
)

// describe renders a frame in flight for the trace, short enough to read:
//
//	1->2 Vote pre-vote epoch=1 last=1/0
//	2->1 VoteResponse granted epoch=0 leader=-1
func (m *message) describe() string {
	return fmt.Sprintf("%d->%d %s", m.from(), m.to(), m.summary())
}

func (m *message) summary() string {
	if m.request {
		switch r := m.body.(type) {
		case *kmsg.VoteRequest:
			p := r.Topics[0].Partitions[0]
			kind := "Vote"
			if p.PreVote {
				kind = "Vote pre-vote"
			}
			return fmt.Sprintf("%s epoch=%d last=%d/%d", kind, p.CandidateEpoch, p.LastOffsetEpoch, p.LastOffset)
		case *kmsg.BeginQuorumEpochRequest:
			p := r.Topics[0].Partitions[0]
			return fmt.Sprintf("BeginQuorumEpoch epoch=%d leader=%d", p.LeaderEpoch, p.LeaderID)
		case *kmsg.EndQuorumEpochRequest:
			p := r.Topics[0].Partitions[0]
			return fmt.Sprintf("EndQuorumEpoch epoch=%d leader=%d successors=%v", p.LeaderEpoch, p.LeaderID, p.PreferredSuccessors)
		case *kmsg.FetchRequest:
			p := r.Topics[0].Partitions[0]
			return fmt.Sprintf("Fetch epoch=%d offset=%d last_epoch=%d hw=%d", p.CurrentLeaderEpoch, p.FetchOffset, p.LastFetchedEpoch, p.HighWatermark)
		case *kmsg.FetchSnapshotRequest:
			p := r.Topics[0].Partitions[0]
			return fmt.Sprintf("FetchSnapshot epoch=%d snapshot=%d-%d position=%d", p.CurrentLeaderEpoch, p.SnapshotID.EndOffset, p.SnapshotID.Epoch, p.Position)
		}
		return kmsg.NameForKey(m.body.Key())
	}
	switch r := m.resp.(type) {
	case *kmsg.VoteResponse:
		p := r.Topics[0].Partitions[0]
		verdict := "rejected"
		if p.VoteGranted {
			verdict = "granted"
		}
		return fmt.Sprintf("VoteResponse %s%s epoch=%d leader=%d", verdict, errorSuffix(p.ErrorCode), p.LeaderEpoch, p.LeaderID)
	case *kmsg.BeginQuorumEpochResponse:
		p := r.Topics[0].Partitions[0]
		return fmt.Sprintf("BeginQuorumEpochResponse%s epoch=%d leader=%d", errorSuffix(p.ErrorCode), p.LeaderEpoch, p.LeaderID)
	case *kmsg.EndQuorumEpochResponse:
		p := r.Topics[0].Partitions[0]
		return fmt.Sprintf("EndQuorumEpochResponse%s epoch=%d leader=%d", errorSuffix(p.ErrorCode), p.LeaderEpoch, p.LeaderID)
	case *kmsg.FetchResponse:
		p := r.Topics[0].Partitions[0]
		var b strings.Builder
		fmt.Fprintf(&b, "FetchResponse%s epoch=%d leader=%d", errorSuffix(p.ErrorCode), p.CurrentLeader.LeaderEpoch, p.CurrentLeader.LeaderID)
		if p.ErrorCode == 0 {
			fmt.Fprintf(&b, " hw=%d", p.HighWatermark)
		}
		switch {
		case p.DivergingEpoch.EndOffset >= 0:
			fmt.Fprintf(&b, " diverging=%d/%d", p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset)
		case p.SnapshotID.EndOffset >= 0:
			fmt.Fprintf(&b, " snapshot=%d-%d", p.SnapshotID.EndOffset, p.SnapshotID.Epoch)
		case len(p.RecordBatches) > 0:
			b.WriteString(" batches=" + describeBatches(p.RecordBatches))
		}
		return b.String()
	case *kmsg.FetchSnapshotResponse:
		p := r.Topics[0].Partitions[0]
		return fmt.Sprintf("FetchSnapshotResponse%s position=%d bytes=%d size=%d", errorSuffix(p.ErrorCode), p.Position, len(p.Bytes), p.Size)
	}
	return kmsg.NameForKey(m.resp.Key()) + "Response"
}

// describeBatches lists batches as [base-last epoch], a control batch
// marked with a c.
func describeBatches(b []byte) string {
	var parts []string
	s := batch.Scanner{Buf: b}
	for s.Next() {
		h := s.Header()
		kind := ""
		if h.IsControl() {
			kind = "c"
		}
		parts = append(parts, fmt.Sprintf("%d-%d@%d%s", h.BaseOffset, h.LastOffset(), h.LeaderEpoch, kind))
	}
	return strings.Join(parts, ",")
}

func errorSuffix(code int16) string {
	if code == 0 {
		return ""
	}
	return " error=" + errorName(code)
}
