package quorum

import (
	"errors"
	"fmt"

	"sluice/core"
	"sluice/core/batch"
	corelog "sluice/core/log"
	"sluice/core/metadata"
)

// Limits of the metadata log.
const (
	// recordsPerProposalMax bounds one proposal: it becomes one batch.
	recordsPerProposalMax = 10_000
	// pendingProposalsMax bounds proposals waiting for their sync.
	pendingProposalsMax = 1_000
	// replayReadBytes is how much of the metadata log is read at a time
	// when replaying it at start.
	replayReadBytes = 1 << 20
)

// ErrTooManyProposals reports that the quorum is not keeping up.
var ErrTooManyProposals = errors.New("quorum: too many proposals waiting to commit")

// CommitFunc receives each committed record with its metadata log offset,
// in log order.
type CommitFunc func(offset int64, r metadata.Record)

// Local is the quorum of one voter: the node itself.
type Local struct {
	w        core.World
	log      *corelog.Log
	onCommit CommitFunc

	// pending are proposals appended but not yet synced, in log order.
	pending []proposal
	// committedEnd is the offset after the last record handed to
	// onCommit.
	committedEnd int64
}

type proposal struct {
	records    []metadata.Record
	baseOffset int64
	lastOffset int64
	done       func(lastOffset int64, err error)
}

// OpenLocal opens (or creates) the metadata log in dir and replays every
// record in it through onCommit before returning. With one voter, every
// record that survived on disk was committed or could have been: a record
// is only ever proposed by this node, so nothing else could have overtaken
// it.
func OpenLocal(w core.World, dir string, onCommit CommitFunc) (*Local, error) {
	config := corelog.DefaultConfig()
	config.RetentionAge = corelog.Unlimited
	config.SegmentBytes = 64 << 20
	l, err := corelog.Open(w, dir, config)
	if err != nil {
		return nil, fmt.Errorf("quorum: metadata log: %w", err)
	}
	q := &Local{w: w, log: l, onCommit: onCommit, committedEnd: l.StartOffset()}
	if err := q.replay(); err != nil {
		return nil, err
	}
	l.OnSynced(q.synced)
	return q, nil
}

func (q *Local) replay() error {
	for q.committedEnd < q.log.EndOffset() {
		chunk, err := q.log.Read(q.committedEnd, q.log.EndOffset(), replayReadBytes, true)
		if err != nil {
			return fmt.Errorf("quorum: replaying the metadata log at %d: %w", q.committedEnd, err)
		}
		s := batch.Scanner{Buf: chunk}
		for s.Next() {
			if err := q.deliver(s.Batch()); err != nil {
				return err
			}
		}
		if s.Err() != nil {
			return fmt.Errorf("quorum: metadata log at %d: %w", q.committedEnd, s.Err())
		}
	}
	return nil
}

// deliver hands every record of one committed batch to onCommit.
func (q *Local) deliver(b []byte) error {
	h, err := batch.Parse(b)
	if err != nil {
		return err
	}
	records, err := batch.Records(b)
	if err != nil {
		return fmt.Errorf("quorum: metadata batch at %d: %w", h.BaseOffset, err)
	}
	for i, r := range records {
		record, err := metadata.DecodeRecord(r.Value)
		if err != nil {
			return fmt.Errorf("quorum: metadata record at %d: %w", h.BaseOffset+int64(i), err)
		}
		q.onCommit(h.BaseOffset+int64(i), record)
	}
	q.committedEnd = h.NextOffset()
	return nil
}

// IsLeader reports whether this node may propose; a single voter always may.
func (q *Local) IsLeader() bool { return true }

// Propose appends records to the metadata log as one batch and calls done
// once they are committed (synced), after onCommit has seen them.
func (q *Local) Propose(records []metadata.Record, done func(lastOffset int64, err error)) {
	switch {
	case len(records) == 0:
		panic("quorum: empty proposal")
	case len(records) > recordsPerProposalMax:
		done(-1, fmt.Errorf("quorum: proposal of %d records exceeds %d", len(records), recordsPerProposalMax))
		return
	case len(q.pending) >= pendingProposalsMax:
		done(-1, ErrTooManyProposals)
		return
	}
	spec := batch.Spec{
		BaseTimestamp: q.w.Clock.Now().UnixMilli(),
		ProducerID:    batch.NoProducerID,
	}
	for _, r := range records {
		spec.Records = append(spec.Records, batch.Record{Value: r.Encode()})
	}
	info, err := q.log.Append(batch.Build(spec), 0)
	if err != nil {
		done(-1, fmt.Errorf("quorum: appending to the metadata log: %w", err))
		return
	}
	q.pending = append(q.pending, proposal{records: records, baseOffset: info.FirstOffset, lastOffset: info.LastOffset, done: done})
	q.log.Sync()
}

// synced commits every pending proposal the sync covered, in order.
func (q *Local) synced(syncedOffset int64) {
	for len(q.pending) > 0 && q.pending[0].lastOffset < syncedOffset {
		p := q.pending[0]
		q.pending = q.pending[1:]
		if p.baseOffset != q.committedEnd {
			panic(fmt.Sprintf("quorum: committing offset %d but the committed end is %d", p.baseOffset, q.committedEnd))
		}
		for i, r := range p.records {
			q.onCommit(p.baseOffset+int64(i), r)
		}
		q.committedEnd = p.lastOffset + 1
		p.done(p.lastOffset, nil)
	}
}

// Close closes the metadata log.
func (q *Local) Close() error { return q.log.Close() }
