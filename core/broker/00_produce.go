package broker

// Produce (key 0), versions 3-9 honoured; 0-2 advertised and refused.
//
// Each partition's records must be exactly one RecordBatch v2 (Kafka's rule
// since v3); it is validated once and stored as produced
// (replica.AppendAsLeader), unless the topic's compression.type names a
// codec: then the leader rewrites it in that codec.
// acks=0 gets no answer at all, unless a partition fails: then the
// connection is closed, as Kafka does, for the client to notice. acks=1 is
// answered once the leader's log has the batch; acks=-1 (all) once the
// high watermark covers it, which under the durable default means every
// in-sync replica has fsynced it. A batch the idempotent producer already
// sent is answered with its original offsets. The request's TimeoutMillis
// bounds the wait for acks=-1; on expiry the partition is answered
// REQUEST_TIMED_OUT (the write may still commit later, which idempotent
// producers handle by retrying).
//
// Version notes: v3 brought transactional ids (refused: no transactions
// here); v5 adds LogStartOffset to the answer; v8 per-record errors
// (ErrorRecords, unused); v9 is flexible. Versions 0-2 carried old message
// formats; Kafka 4 advertises them for librdkafka's sake but rejects them.

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core"
	"sluice/core/batch"
	"sluice/core/metadata"
	"sluice/core/replica"
)

func init() {
	registerAPI(&api{
		key: 0, advertisedMin: 0, honouredMin: 3, max: 9,
		handle: (*Broker).handleProduce,
		reject: func(r kmsg.Request) kmsg.Response {
			req := r.(*kmsg.ProduceRequest)
			resp := req.ResponseKind().(*kmsg.ProduceResponse)
			for _, t := range req.Topics {
				rt := kmsg.NewProduceResponseTopic()
				rt.Topic = t.Topic
				for _, p := range t.Partitions {
					rp := kmsg.NewProduceResponseTopicPartition()
					rp.Partition = p.Partition
					rp.ErrorCode = kerr.UnsupportedVersion.Code
					rt.Partitions = append(rt.Partitions, rp)
				}
				resp.Topics = append(resp.Topics, rt)
			}
			return resp
		},
	})
}

// produceTimeoutMax caps a produce's TimeoutMillis.
const produceTimeoutMax = 5 * time.Minute

// produceKey is Produce's key.
const produceKey = 0

// produceRoom is what handling a produce needs beside its request, kept in
// its exchange (produceExchange): the pendingProduce and its answer, with
// room for one topic of one partition, as a producer of one partition, or
// without linger, sends, and for its batch checks.
type produceRoom struct {
	pending            pendingProduce
	response           kmsg.ProduceResponse
	responseTopics     [1]kmsg.ProduceResponseTopic
	responsePartitions [1]kmsg.ProduceResponseTopicPartition
	acks               [1]pendingAck
	ackList            [1]*pendingAck
	checks             [1]producedCheck
	checkLists         [1][]producedCheck
}

func (b *Broker) handleProduce(x *exchange) {
	req := x.request.Body.(*kmsg.ProduceRequest)
	room := x.produce
	if room == nil {
		room = &produceRoom{}
	}
	resp := &room.response // as req.ResponseKind() makes it
	*resp = kmsg.NewProduceResponse()
	resp.Version = req.Version
	acks := req.Acks
	if acks != 0 && acks != 1 && acks != -1 {
		b.answerProduceError(x, req, kerr.InvalidRequiredAcks)
		return
	}
	if req.TransactionID != nil {
		// Transactions are not implemented; a transactional producer
		// could not have got here without InitProducerId anyway.
		b.answerProduceError(x, req, kerr.TransactionalIDAuthorizationFailed)
		return
	}

	// handling holds the answer back until every partition has been
	// handled: an acknowledgement may come at once, inside WaitForAcks.
	early := b.w.Canaries.On(CanaryProduceAnsweredEarly)
	pp := &room.pending
	*pp = pendingProduce{exchange: x, response: resp, acks: acks, handling: !early, early: early}
	pp.pending = room.ackList[:0]
	resp.Topics = roomFor(room.responseTopics[:], len(req.Topics))[:0]
	for ti, t := range req.Topics {
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = t.Topic
		if ti == 0 {
			rt.Partitions = roomFor(room.responsePartitions[:], len(t.Partitions))[:0]
		} else {
			rt.Partitions = make([]kmsg.ProduceResponseTopicPartition, 0, len(t.Partitions))
		}
		for _, rp := range t.Partitions {
			answer := kmsg.NewProduceResponseTopicPartition()
			answer.Partition = rp.Partition
			answer.BaseOffset = -1
			answer.LogAppendTime = -1
			answer.LogStartOffset = -1
			rt.Partitions = append(rt.Partitions, answer)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	for ti, t := range req.Topics {
		for pi, rp := range t.Partitions {
			answer := &resp.Topics[ti].Partitions[pi]
			if metadata.IsInternalTopic(t.Topic) {
				// Only the broker writes its internal topics (group
				// metadata and offsets); Kafka answers clients this.
				answer.ErrorCode = kerr.InvalidTopicException.Code
				continue
			}
			p, err := b.leaderPartition(partitionKey{topic: t.Topic, partition: rp.Partition})
			if err != nil {
				answer.ErrorCode = errorCode(err)
				continue
			}
			check := x.batchCheck(ti, pi)
			if check.framing != nil {
				answer.ErrorCode = errorCode(check.framing)
				continue
			}
			result, err := p.AppendCheckedAsLeader(rp.Records, check.batch, acks == -1)
			if err != nil {
				answer.ErrorCode = errorCode(err)
				continue
			}
			answer.BaseOffset = result.BaseOffset
			answer.LogAppendTime = result.LogAppendTime
			answer.LogStartOffset = result.LogStartOffset
			if acks != -1 {
				continue
			}
			var a *pendingAck
			if len(pp.pending) < len(room.acks) {
				a = &room.acks[len(pp.pending)]
			} else {
				a = &pendingAck{}
			}
			*a = pendingAck{produce: pp, answer: answer}
			pp.pending = append(pp.pending, a)
			a.waiter = p.WaitForAcks(result.LastOffset, a.acked)
		}
	}
	pp.handling = false
	if !pp.answered && !pp.acknowledged() {
		timeout := min(time.Duration(max(req.TimeoutMillis, 0))*time.Millisecond, produceTimeoutMax)
		pp.timer = b.w.Clock.AfterFunc(timeout, pp.timedOut)
	}
	pp.finish()
}

// pendingProduce is a produce being handled: its answer, and its acks=-1
// partitions still waiting for the high watermark. It is answered when
// none is left waiting, or at its timeout. (One struct with methods
// rather than closures over local variables, which cost an allocation
// each per produce.)
type pendingProduce struct {
	exchange *exchange
	response *kmsg.ProduceResponse
	acks     int16
	// pending are the acks=-1 partitions, done or still waiting.
	pending  []*pendingAck
	timer    core.Timer
	answered bool
	// handling is set while handleProduce still goes through the
	// partitions: the answer must not leave before the last one.
	handling bool
	// early is CanaryProduceAnsweredEarly.
	early bool
}

// finish answers the produce once no partition is waiting any more.
func (pp *pendingProduce) finish() {
	if pp.answered || pp.handling || !pp.acknowledged() {
		return
	}
	pp.answered = true
	if pp.timer != nil {
		pp.timer.Stop()
	}
	if !pp.early {
		pp.refuseAnswersWithoutOffset()
	}
	pp.exchange.respond(pp.response)
}

// acknowledged reports whether no acks=-1 partition is still waiting.
func (pp *pendingProduce) acknowledged() bool {
	for _, a := range pp.pending {
		if !a.done {
			return false
		}
	}
	return true
}

// refuseAnswersWithoutOffset turns a partition's answer with no error and
// no offset, which a client takes for a write it cannot place, into
// UNKNOWN_SERVER_ERROR (the client retries; an idempotent retry is answered
// as the duplicate it is), and logs it as the bug it is: none should ever
// be about to go out.
func (pp *pendingProduce) refuseAnswersWithoutOffset() {
	for ti := range pp.response.Topics {
		t := &pp.response.Topics[ti]
		for pi := range t.Partitions {
			if p := &t.Partitions[pi]; p.ErrorCode == 0 && p.BaseOffset < 0 {
				pp.exchange.client.broker.log.Error("a produce answer without an error or an offset, refused instead", "topic", t.Topic, "partition", p.Partition)
				p.ErrorCode = kerr.UnknownServerError.Code
			}
		}
	}
}

// timedOut answers the produce at its timeout: the partitions still
// waiting get REQUEST_TIMED_OUT.
func (pp *pendingProduce) timedOut() {
	for _, a := range pp.pending {
		if !a.done {
			// Whether or not it commits later, this request stops
			// waiting for it.
			a.waiter.Cancel()
			a.answer.ErrorCode = kerr.RequestTimedOut.Code
			a.done = true
		}
	}
	pp.finish()
}

// pendingAck is one partition of an acks=-1 produce, waiting.
type pendingAck struct {
	produce *pendingProduce
	answer  *kmsg.ProduceResponseTopicPartition
	waiter  *replica.AckWaiter
	done    bool
}

// acked is the partition's WaitForAcks callback.
func (a *pendingAck) acked(err error) {
	if err != nil {
		a.answer.ErrorCode = errorCode(err)
	}
	a.done = true
	a.produce.finish()
}

// answerProduceError answers every partition of a produce with one error.
func (b *Broker) answerProduceError(x *exchange, req *kmsg.ProduceRequest, err *kerr.Error) {
	resp := req.ResponseKind().(*kmsg.ProduceResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewProduceResponseTopicPartition()
			rp.Partition = p.Partition
			rp.ErrorCode = err.Code
			rp.BaseOffset = -1
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	x.respond(resp)
}

// respondToAcksZero completes a produce with acks=0, which is never
// answered: its client expects no answer. If a partition failed, the
// connection is closed instead, as Kafka does, so that the client learns
// something went wrong and refreshes its metadata: a producer whose
// leader moved would otherwise go on sending to a broker that drops
// everything it sends.
func (x *exchange) respondToAcksZero(resp *kmsg.ProduceResponse) {
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				x.respondByHangingUp(fmt.Errorf("produce with acks=0 failed: %s-%d: %w", t.Topic, p.Partition, kerr.ErrorForCode(p.ErrorCode)))
				return
			}
		}
	}
	x.respondNothing()
}

// zstdProduceVersionMin is the first Produce version that may carry zstd
// batches (KIP-110).
const zstdProduceVersionMin = 7

// producedCheck is what preparing a produce found of one partition's
// records, off the loop in production: their framing as the request
// carries them (checkProducedFraming), answered before anything else of
// the partition but its leadership, and the batch's own check, which the
// append answers in its turn.
type producedCheck struct {
	framing error
	batch   replica.BatchCheck
}

// checkProduced checks one partition's records of a produce of version.
func checkProduced(version int16, records []byte) producedCheck {
	return producedCheck{framing: checkProducedFraming(version, records), batch: replica.CheckBatch(records)}
}

// checkProducedFraming refuses a partition's records as Kafka's
// ProduceRequest.validateRecords does, before anything looks inside the
// batch: no whole batch, or more than one, or one of another magic, is
// INVALID_RECORD (which clients do not retry, where CORRUPT_MESSAGE they
// would); a zstd batch before Produce v7 is UNSUPPORTED_COMPRESSION_TYPE;
// a length prefix too small for a batch is CORRUPT_MESSAGE.
func checkProducedFraming(version int16, records []byte) error {
	count, first, err := batch.Frames(records)
	switch {
	case err != nil:
		return kerr.CorruptMessage
	case count == 0:
		return kerr.InvalidRecord
	case batch.MagicOf(first) != batch.Magic:
		return kerr.InvalidRecord
	case version < zstdProduceVersionMin && batch.CompressionOf(first) == batch.CompressionZstd:
		return kerr.UnsupportedCompressionType
	case count > 1:
		return kerr.InvalidRecord
	}
	return nil
}
