package broker

// The AlterPartition sender (Kafka's AlterPartitionManager): leaders'
// ISR proposals (core/replica, isr_changes.go) go to the active controller
// in AlterPartition v3 requests, with the broker epoch of every proposed
// member (KIP-903). One request is in flight at a time, carrying every
// proposal queued meanwhile; a partition has at most one proposal pending,
// so one request never names a partition twice.
//
// While the outcome is unknown — no controller known, the request or its
// answer lost, NOT_CONTROLLER, REQUEST_TIMED_OUT — the proposal is sent
// again after a backoff, for as long as its partition still waits on it:
// a proposal may have committed without the answer arriving, and a
// partition that dropped it could then compute its high watermark over an
// ISR smaller than the one the controller may elect from. A definite
// answer goes to the partition (ISRProposalAnswered), which decides.

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/metadata"
	"sluice/core/replica"
)

// Limits and pacing of the AlterPartition sender.
const (
	// alterPartitionsQueuedMax bounds the proposals waiting; beyond it a
	// proposal is refused at once with OPERATION_NOT_ATTEMPTED, and its
	// partition may propose again later.
	alterPartitionsQueuedMax = 10_000
	// alterPartitionsPerRequestMax bounds the partitions one request
	// names: the controller commits one request as one proposal of at
	// most 10,000 records (controller.recordsPerOperationMax).
	alterPartitionsPerRequestMax = 1_000
	// alterPartitionTimeout bounds the wait for one request's answer.
	alterPartitionTimeout = 5 * time.Second
	// alterPartitionRetryMin and alterPartitionRetryMax bound the backoff
	// before sending again after an unknown outcome, doubling in between.
	alterPartitionRetryMin = 50 * time.Millisecond
	alterPartitionRetryMax = time.Second
	// alterPartitionVersion is the version sent: v3 carries broker epochs.
	alterPartitionVersion = 3
)

// isrChange is one partition's proposal waiting to be sent or answered.
type isrChange struct {
	key       partitionKey
	partition *replica.Partition
	proposal  replica.ISRProposal
}

type alterPartitionSender struct {
	b *Broker
	// queued are the proposals to send next, oldest first.
	queued []isrChange
	// inFlight holds the proposals of the request out, nil when none is;
	// generation tells its answer from one to an abandoned request.
	inFlight   []isrChange
	generation uint64
	retry      core.Timer
	backoff    time.Duration
	stopped    bool
}

func newAlterPartitionSender(b *Broker) *alterPartitionSender {
	return &alterPartitionSender{b: b, backoff: alterPartitionRetryMin}
}

// submit queues a partition's proposal, replacing an older one of the same
// partition that is still queued.
func (s *alterPartitionSender) submit(key partitionKey, p *replica.Partition, proposal replica.ISRProposal) {
	change := isrChange{key: key, partition: p, proposal: proposal}
	for i := range s.queued {
		if s.queued[i].key == key {
			s.queued[i] = change
			s.sendSoon()
			return
		}
	}
	if len(s.queued) >= alterPartitionsQueuedMax {
		s.b.w.Clock.AfterFunc(0, func() { p.ISRProposalAnswered(proposal, -1, kerr.OperationNotAttempted) })
		return
	}
	s.queued = append(s.queued, change)
	s.sendSoon()
}

// sendSoon sends on a later turn of the loop, so that a partition's
// proposal is never answered from inside the call that made it, and
// proposals made in one turn share a request.
func (s *alterPartitionSender) sendSoon() {
	if s.retry != nil || s.inFlight != nil || s.stopped {
		return
	}
	s.retry = s.b.w.Clock.AfterFunc(0, func() {
		s.retry = nil
		s.send()
	})
}

// send sends one request with the queued proposals still pending.
func (s *alterPartitionSender) send() {
	if s.inFlight != nil || s.stopped {
		return
	}
	var batch []isrChange
	kept := s.queued[:0]
	for _, change := range s.queued {
		switch {
		case !change.partition.ISRProposalPending(change.proposal):
		case len(batch) < alterPartitionsPerRequestMax:
			batch = append(batch, change)
		default:
			kept = append(kept, change)
		}
	}
	s.queued = kept
	if len(batch) == 0 {
		return
	}
	if s.b.brokerEpoch == 0 {
		// Not registered (yet, or again): the controller would refuse.
		s.retryLater(batch)
		return
	}
	req := s.request(batch)
	s.inFlight = batch
	s.generation++
	generation := s.generation
	s.b.toController(req, alterPartitionTimeout, func(r kmsg.Response, err error) {
		if generation != s.generation || s.stopped {
			return // abandoned for a new controller
		}
		s.inFlight = nil
		if err != nil || r.(*kmsg.AlterPartitionResponse).ErrorCode != 0 {
			if err == nil {
				err = kerr.ErrorForCode(r.(*kmsg.AlterPartitionResponse).ErrorCode)
			}
			s.b.log.Debug("AlterPartition not answered; retrying", "error", err, "partitions", len(batch))
			s.retryLater(batch)
			return
		}
		s.answered(batch, r.(*kmsg.AlterPartitionResponse))
	})
}

// request builds the AlterPartition request for a batch of proposals.
func (s *alterPartitionSender) request(batch []isrChange) *kmsg.AlterPartitionRequest {
	req := kmsg.NewPtrAlterPartitionRequest()
	req.Version = alterPartitionVersion
	req.BrokerID = s.b.config.NodeID
	req.BrokerEpoch = s.b.brokerEpoch
	topicIndex := map[metadata.TopicID]int{}
	for _, change := range batch {
		id := change.partition.TopicID
		i, ok := topicIndex[id]
		if !ok {
			i = len(req.Topics)
			topicIndex[id] = i
			t := kmsg.NewAlterPartitionRequestTopic()
			t.Topic, t.TopicID = change.key.topic, id
			req.Topics = append(req.Topics, t)
		}
		rp := kmsg.NewAlterPartitionRequestTopicPartition()
		rp.Partition = change.key.partition
		rp.LeaderEpoch = change.proposal.LeaderEpoch
		rp.PartitionEpoch = change.proposal.PartitionEpoch
		for _, m := range change.proposal.ISR {
			member := kmsg.NewAlterPartitionRequestTopicPartitionNewEpochISR()
			member.BrokerID, member.BrokerEpoch = m.BrokerID, m.BrokerEpoch
			if m.BrokerID == s.b.config.NodeID {
				member.BrokerEpoch = s.b.brokerEpoch
			}
			rp.NewEpochISR = append(rp.NewEpochISR, member)
		}
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, rp)
	}
	return req
}

// answered hands each partition its answer; those whose outcome is still
// unknown are sent again.
func (s *alterPartitionSender) answered(batch []isrChange, resp *kmsg.AlterPartitionResponse) {
	type answerKey struct {
		topic     [16]byte
		partition int32
	}
	answers := map[answerKey]kmsg.AlterPartitionResponseTopicPartition{}
	for _, t := range resp.Topics {
		for _, ap := range t.Partitions {
			answers[answerKey{topic: t.TopidID, partition: ap.Partition}] = ap
		}
	}
	var again []isrChange
	for _, change := range batch {
		ap, ok := answers[answerKey{topic: change.partition.TopicID, partition: change.key.partition}]
		err := kerr.ErrorForCode(ap.ErrorCode)
		if !ok || errors.Is(err, kerr.NotController) || errors.Is(err, kerr.RequestTimedOut) {
			again = append(again, change)
			continue
		}
		if err != nil {
			s.b.log.Info("AlterPartition refused", "partition", change.key, "proposed", change.proposal.Members(), "error", err)
		}
		change.partition.ISRProposalAnswered(change.proposal, ap.PartitionEpoch, err)
	}
	if len(again) > 0 {
		s.retryLater(again)
		return
	}
	s.backoff = alterPartitionRetryMin
	s.sendSoon()
}

// retryLater puts proposals back at the head of the queue and sends again
// after the backoff.
func (s *alterPartitionSender) retryLater(batch []isrChange) {
	s.requeue(batch)
	if s.retry != nil || s.stopped {
		return
	}
	s.retry = s.b.w.Clock.AfterFunc(s.backoff, func() {
		s.retry = nil
		s.send()
	})
	s.backoff = min(2*s.backoff, alterPartitionRetryMax)
}

// requeue puts proposals back at the head of the queue, unless a newer
// proposal of the same partition arrived meanwhile.
func (s *alterPartitionSender) requeue(batch []isrChange) {
	var head []isrChange
	for _, change := range batch {
		newer := false
		for _, queued := range s.queued {
			newer = newer || queued.key == change.key
		}
		if !newer {
			head = append(head, change)
		}
	}
	s.queued = append(head, s.queued...)
}

// controllerChanged abandons the request in flight to the old controller
// and sends its proposals to the new one at once.
func (s *alterPartitionSender) controllerChanged() {
	if s.inFlight != nil {
		s.generation++
		s.requeue(s.inFlight)
		s.inFlight = nil
	}
	if s.retry != nil {
		s.retry.Stop()
		s.retry = nil
	}
	s.backoff = alterPartitionRetryMin
	s.sendSoon()
}

// stop forgets every proposal (shutdown).
func (s *alterPartitionSender) stop() {
	s.stopped = true
	s.queued, s.inFlight = nil, nil
	if s.retry != nil {
		s.retry.Stop()
	}
}
