package replica

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/core/batch"
	corelog "sluice/core/log"
)

// heldRecords are fetched batches waiting for a truncation to become
// durable before they can be appended.
type heldRecords struct {
	records    []byte
	generation uint64
	// startAt, when not -1, is the log start to restore after the append:
	// the log was restarted at the first batch's base offset so that a
	// batch straddling the leader's log start could be stored whole.
	startAt int64
}

// appendAsFollower stores batches fetched from the leader as they are:
// offsets, epochs and producer ids were given by the leader, and the log
// takes its epochs from them. Every batch header also goes into this
// replica's idempotent-producer state, so that if it becomes leader a
// producer's retry of a batch it already has is still recognized as a
// duplicate. A partial batch at the end of the answer (a leader may cut
// one at its byte limit) is left for the next fetch.
//
// If the log still refuses appends because a truncation is not durable
// yet, the batches are held and appended once it is (holdUntilDurable).
func (p *Partition) appendAsFollower(records []byte) error {
	records, err := wholeBatches(records)
	if err != nil {
		p.logger.Warn("leader sent malformed batches", "error", err)
		return kerr.CorruptMessage
	}
	if len(records) == 0 {
		return nil
	}
	first, err := batch.Parse(records)
	if err != nil {
		return kerr.CorruptMessage
	}
	end := p.log.EndOffset()
	if first.BaseOffset < end {
		if p.log.StartOffset() != end || first.LastOffset() < end {
			p.logger.Warn("leader sent a batch below the log end", "base", first.BaseOffset, "end", end)
			return kerr.UnknownServerError
		}
		// This empty log starts inside the leader's first batch (a
		// DeleteRecords there moved the leader's start into it): restart
		// the log at the batch's base offset, store the batch whole, and
		// move the start back up, as Kafka's follower does.
		start := p.log.StartOffset()
		if err := p.restartLogAt(first.BaseOffset, "the leader's first batch starts before this log's start"); err != nil {
			return err
		}
		p.holdUntilDurable(records, start)
		return nil
	}
	return p.appendReplicated(records, -1)
}

// appendReplicated appends whole batches to the log and records them.
func (p *Partition) appendReplicated(records []byte, startAt int64) error {
	segmentsBefore := p.log.SegmentCount()
	info, err := p.log.AppendReplicated(records)
	if errors.Is(err, corelog.ErrTruncationNotDurable) {
		p.holdUntilDurable(records, startAt)
		return nil
	}
	if err != nil {
		p.logger.Warn("replicated append failed", "error", err)
		return kafkaError(err)
	}
	now := p.w.Clock.Now().UnixMilli()
	recordsAppended := int64(0)
	forget := p.w.Canaries.On(CanaryFollowerForgetsProducers)
	scanner := batch.Scanner{Buf: records}
	for scanner.Next() {
		h := scanner.Header() // copied once, not once per use
		if !forget {
			p.producers.Record(h, now)
		}
		recordsAppended += int64(h.RecordCount)
	}
	if p.log.SegmentCount() != segmentsBefore {
		p.snapshots.write(p.producers, p.log.EndOffset())
	}
	if startAt > p.log.StartOffset() {
		if err := p.log.AdvanceStartOffset(startAt); err != nil {
			p.logger.Warn("cannot restore the log start", "start", startAt, "error", err)
		}
		p.highWatermark = max(p.highWatermark, p.log.StartOffset())
	}
	p.logger.Debug("replicated", "first", info.FirstOffset, "last", info.LastOffset)
	p.afterAppend(recordsAppended)
	return nil
}

// holdUntilDurable keeps records until every change made to the log so far
// is durable, then appends them, unless the replica has meanwhile stopped
// following this leader.
func (p *Partition) holdUntilDurable(records []byte, startAt int64) {
	if p.held != nil {
		panic(fmt.Sprintf("replica: %s-%d holds records twice", p.Topic, p.Index))
	}
	held := &heldRecords{records: records, generation: p.generation, startAt: startAt}
	p.held = held
	p.waitUntilDurable(func() {
		if p.held != held || p.closed || held.generation != p.generation {
			return
		}
		p.held = nil
		if err := p.appendReplicated(held.records, held.startAt); err != nil {
			p.logger.Warn("held records not appended; fetching them again", "error", err)
		}
	})
}

// waitUntilDurable calls then once every change made to the log so far is
// durable, and keeps the follower from fetching until it has. then runs
// before the follower is told it may fetch again.
func (p *Partition) waitUntilDurable(then func()) {
	p.durabilityWaits++
	p.log.WhenDurable(func() {
		p.durabilityWaits--
		then()
		p.notifyFetchReady()
	})
}

// wholeBatches returns the prefix of b made of whole batches, refusing
// bytes that are not batches at all.
func wholeBatches(b []byte) ([]byte, error) {
	scanner := batch.Scanner{Buf: b}
	end := 0
	for scanner.Next() {
		end = scanner.Position() + len(scanner.Batch())
	}
	if err := scanner.Err(); err != nil && !errors.Is(err, batch.ErrTorn) {
		return nil, err
	}
	return b[:end], nil
}
