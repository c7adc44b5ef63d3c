package quorum

import (
	"fmt"
	"slices"
	"strconv"

	"sluice/core/batch"
	"sluice/core/metadata"
)

// Commitment: the leader computes the high watermark from what a majority
// of voters has synced; everyone learns it from the leader (or, a sole
// voter, from itself) and delivers the records below it, in order, once
// they are synced locally too.

// logSynced is the metadata log's OnSynced function.
func (q *Quorum) logSynced(int64) {
	if q.closed {
		return
	}
	if q.role == roleLeader {
		q.maybeCommit()
	}
	// Delivery waits for the local sync too: a leader's own sync may
	// complete after a majority of followers made the records committed.
	q.maybeApply()
	if q.fetcher != nil && q.fetcher.awaitingSync {
		q.maybeFetch()
	}
}

// maybeCommit moves the leader's high watermark up to the largest offset
// that a majority of voters has synced (the leader's own contribution is
// its log's SyncedOffset, the others' their last fetch offset), provided
// the epoch's own LeaderChange batch is below it (Raft §5.4.2). It reports
// whether the high watermark moved.
func (q *Quorum) maybeCommit() bool {
	l := q.leader
	if !l.ready {
		return false
	}
	// The offsets live in an array on the stack: this runs on every
	// fetch a voter sends and every sync of the leader's log.
	var synced [votersMax]int64
	offsets := synced[:0]
	for _, id := range q.voters {
		if id == q.config.NodeID {
			offsets = append(offsets, q.metadataLog.SyncedOffset())
		} else {
			offsets = append(offsets, max(l.replicas[id].syncedEnd, 0))
		}
	}
	slices.Sort(offsets)
	committed := offsets[len(offsets)-q.majority] // a majority has synced at least this far
	if q.world.Canaries.On(CanaryCommitWithoutMajority) {
		committed = q.metadataLog.SyncedOffset() // the planted bug
	}
	if committed <= l.epochStartOffset || committed <= q.highWatermark {
		return false
	}
	q.setHighWatermark(committed)
	q.answerHeldFetches() // followers learn it at once
	q.learnedHighWatermark(committed)
	q.maybeApply()
	return true
}

// setHighWatermark moves the high watermark up.
func (q *Quorum) setHighWatermark(offset int64) {
	if offset < q.highWatermark {
		panic(fmt.Sprintf("quorum: high watermark would go back from %d to %d", q.highWatermark, offset))
	}
	q.highWatermark = offset
	q.checkInvariants()
}

// maybeApply delivers the committed records this node has synced, then
// completes the proposals they end and takes a snapshot if one is due.
func (q *Quorum) maybeApply() {
	if q.applying || q.logReset != nil || q.closed {
		return
	}
	limit := min(q.highWatermark, q.metadataLog.SyncedOffset())
	if q.appliedEnd >= limit {
		return
	}
	if err := q.applyUpTo(limit); err != nil {
		q.closed = true
		q.world.Halt(err)
		return
	}
	if q.leader != nil {
		q.leader.completeProposals(q.appliedEnd)
	}
	q.maybeCaughtUp()
	q.maybeSnapshot()
}

// applyUpTo reads the log from appliedEnd and delivers every record of its
// data batches below limit to onCommit, skipping control batches.
func (q *Quorum) applyUpTo(limit int64) error {
	q.applying = true
	defer func() { q.applying = false }()
	for q.appliedEnd < limit && !q.closed {
		chunk, err := q.metadataLog.Read(q.appliedEnd, limit, applyReadBytes, true)
		if err != nil {
			return fmt.Errorf("quorum: reading committed metadata at %d: %w", q.appliedEnd, err)
		}
		if len(chunk) == 0 {
			return nil // limit lies inside a batch: it is delivered whole, later
		}
		s := batch.Scanner{Buf: chunk}
		for s.Next() {
			h := s.Header()
			if h.NextOffset() > limit {
				return nil
			}
			if !h.IsControl() {
				if err := q.deliver(h, s.Batch()); err != nil {
					return err
				}
			}
			q.appliedEnd = h.NextOffset()
		}
		if s.Err() != nil {
			return fmt.Errorf("quorum: metadata log at %d: %w", q.appliedEnd, s.Err())
		}
	}
	return nil
}

// deliver hands the records of one committed data batch to onCommit.
func (q *Quorum) deliver(h batch.Header, b []byte) error {
	records, err := batch.Records(b)
	if err != nil {
		return fmt.Errorf("quorum: metadata batch at %d: %w", h.BaseOffset, err)
	}
	for _, r := range records {
		offset := h.BaseOffset + int64(r.OffsetDelta)
		if offset < q.appliedEnd {
			continue
		}
		record, err := metadata.DecodeRecord(r.Value)
		if err != nil {
			return fmt.Errorf("quorum: metadata record at %d: %w", offset, err)
		}
		q.onCommit(offset, record)
	}
	return nil
}

// describeLog is an assertion's message, with the state around it.
func (q *Quorum) describeLog(what string) string {
	l := q.metadataLog
	return fmt.Sprintf("quorum: node %d, %s (role %v, epoch %d, log [%d, %d) synced %d, high watermark %d, applied %d, epochs %v, snapshots %v)",
		q.config.NodeID, what, q.role, q.epoch, l.StartOffset(), l.EndOffset(), l.SyncedOffset(), q.highWatermark, q.appliedEnd, l.EpochEntries(), q.snapshots)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
