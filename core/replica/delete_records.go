package replica

import (
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// DeleteRecordsHighWatermark asks DeleteRecords to delete everything below
// the high watermark, as Kafka's -1 does.
const DeleteRecordsHighWatermark = -1

// pendingDeletesMax bounds the DeleteRecords one partition holds while they
// wait; beyond it a request is answered at once with REQUEST_TIMED_OUT.
const pendingDeletesMax = 1000

// pendingDelete is a DeleteRecords waiting for its move to hold.
type pendingDelete struct {
	offset   int64
	durable  bool // the leader's own move is on disk
	finished bool
	stop     func() bool
	done     func(lowWatermark int64, err error)
}

func (d *pendingDelete) finish(lowWatermark int64, err error) {
	if d.finished {
		return
	}
	d.finished = true
	d.stop()
	d.done(lowWatermark, err)
}

// DeleteRecords moves the log start offset up to offset (Kafka's
// DeleteRecords; DeleteRecordsHighWatermark means the high watermark) and
// calls done with the low watermark once the move holds: it is durable
// here, and every other replica that could lead or still serve reads (see
// lowWatermark) has said, in its fetches, that its own durable log start
// is there too. A leader that answered sooner could crash, and a
// follower from the ISR take over still serving the records it was told
// were deleted, for good: nothing moves a leader's log start back up.
// Kafka's DelayedDeleteRecords waits the same way (lowWatermarkIfLeader); a
// follower moves its start when a fetch answer shows the leader's
// (follower_fetch.go).
//
// An offset above the high watermark, or negative, is
// OFFSET_OUT_OF_RANGE: records not yet committed may not be deleted. An
// offset at or below the start deletes nothing and answers once the start
// holds. A topic whose cleanup.policy lacks delete (compact only) refuses
// with POLICY_VIOLATION, as in Kafka. If the move does not hold within
// timeout, done gets REQUEST_TIMED_OUT (the move stays, and holds later);
// if this replica stops leading first, NOT_LEADER_OR_FOLLOWER.
//
// done may be called before DeleteRecords returns.
func (p *Partition) DeleteRecords(offset int64, timeout time.Duration, done func(lowWatermark int64, err error)) {
	if !p.IsLeader() {
		done(-1, kerr.NotLeaderForPartition)
		return
	}
	if offset == DeleteRecordsHighWatermark {
		offset = p.highWatermark
	}
	switch {
	case !p.config.Delete:
		// Before the offset's range, as Kafka checks it.
		done(-1, kerr.PolicyViolation)
		return
	case offset < 0 || offset > p.highWatermark:
		done(-1, kerr.OffsetOutOfRange)
		return
	case len(p.pendingDeletes) >= pendingDeletesMax:
		done(-1, kerr.RequestTimedOut)
		return
	}
	if offset > p.log.StartOffset() {
		if err := p.log.AdvanceStartOffset(offset); err != nil {
			done(-1, kafkaError(err))
			return
		}
		p.logger.Info("records deleted", "start", offset)
	}
	d := &pendingDelete{offset: max(offset, p.log.StartOffset()), done: done}
	timer := p.w.Clock.AfterFunc(timeout, func() {
		d.finish(-1, kerr.RequestTimedOut)
		p.forgetFinishedDeletes()
	})
	d.stop = timer.Stop
	p.pendingDeletes = append(p.pendingDeletes, d)
	p.log.WhenDurable(func() {
		d.durable = true
		p.completeDeletes()
	})
}

// completeDeletes answers every waiting DeleteRecords whose move holds now,
// and fails them all if this replica no longer leads. It runs when the
// leader's move becomes durable, after every follower fetch (which may
// report a follower's new log start), when the ISR changes, and on the
// ISR check's timer (MaybeShrinkISR), which notices a broker fenced
// since: neither holds a delete up any more.
func (p *Partition) completeDeletes() {
	if len(p.pendingDeletes) == 0 {
		return
	}
	leading := p.IsLeader() && !p.closed
	low := int64(-1)
	if leading {
		low = p.lowWatermark()
		if p.w.Canaries.On(CanaryDeleteWithoutFollowers) {
			low = p.log.StartOffset()
		}
	}
	for _, d := range p.pendingDeletes {
		switch {
		case d.finished:
		case !leading:
			d.finish(-1, kerr.NotLeaderForPartition)
		case d.durable && low >= d.offset:
			d.finish(low, nil)
		}
	}
	p.forgetFinishedDeletes()
}

// forgetFinishedDeletes drops the answered DeleteRecords.
func (p *Partition) forgetFinishedDeletes() {
	p.pendingDeletes = slices.DeleteFunc(p.pendingDeletes, func(d *pendingDelete) bool { return d.finished })
}

// lowWatermark is the lowest durable log start among the replicas a new
// leader could come from, or a stale one still serve reads from, this one
// included: every member of the maximal ISR (the committed ISR and any
// member a pending proposal adds, which may be elected once it commits),
// and every replica on a broker the metadata shows alive (registered and
// unfenced), as Kafka's lowWatermarkIfLeader counts them. A replica
// outside the ISR may be a deposed leader cut off from the controller that
// has not learned it was replaced: until its broker is fenced, clients
// with metadata as old as its own still read from it. Followers report
// their durable starts in their fetches. It is what a DeleteRecords answer
// may promise: the leader's own start may be further on, moved by a later
// deletion its followers have not followed yet.
func (p *Partition) lowWatermark() int64 {
	low := p.log.DurableStartOffset()
	maximal := p.maximalISR()
	for _, f := range p.followers {
		if contains(maximal, f.id) || p.brokerAlive(f.id) {
			low = min(low, f.logStartOffset)
		}
	}
	if p.departedMayServe() || p.takingOver() {
		return -1 // nothing may be promised yet (departed.go, takeover.go)
	}
	return low
}

// brokerAlive reports whether the metadata shows a broker registered and
// unfenced.
func (p *Partition) brokerAlive(id int32) bool {
	if p.replication == nil {
		return false
	}
	_, alive := p.replication.Broker(id)
	return alive
}
