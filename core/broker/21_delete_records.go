package broker

// DeleteRecords (key 21), versions 0-2.
//
// Moves each partition's log start offset up to the requested offset, so
// that consumers can no longer read below it and whole segments below it
// are deleted (replica.DeleteRecords). -1 means the high watermark. An
// offset above the high watermark is OFFSET_OUT_OF_RANGE (uncommitted
// records cannot be deleted); a compact-only topic refuses with
// POLICY_VIOLATION, checked first; an internal topic (__consumer_offsets)
// with INVALID_TOPIC_EXCEPTION, whatever its policy, as Kafka refuses it.
// Each partition answers its new log start offset as
// LowWatermark once the move holds: it is durable on the leader, and every
// other ISR member has followed it (its fetches say so), so that neither a
// crash nor a new leader brings the deleted records back. One that does
// not hold within TimeoutMillis answers REQUEST_TIMED_OUT. Kafka waits for
// the followers too, but not for the disk: its start offset checkpoint is
// written once a minute.
//
// Version notes: v1 is v0 with throttling; v2 is flexible.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

func init() {
	registerAPI(&api{key: 21, advertisedMin: 0, honouredMin: 0, max: 2, handle: (*Broker).handleDeleteRecords})
}

// deleteRecordsTimeoutMax caps a DeleteRecords request's TimeoutMillis.
const deleteRecordsTimeoutMax = 5 * time.Minute

func (b *Broker) handleDeleteRecords(x *exchange) {
	req := x.request.Body.(*kmsg.DeleteRecordsRequest)
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	timeout := min(time.Duration(max(req.TimeoutMillis, 0))*time.Millisecond, deleteRecordsTimeoutMax)
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteRecordsResponseTopic()
		rt.Topic = t.Topic
		for _, rp := range t.Partitions {
			answer := kmsg.NewDeleteRecordsResponseTopicPartition()
			answer.Partition = rp.Partition
			answer.LowWatermark = -1
			rt.Partitions = append(rt.Partitions, answer)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	// Every partition is answered exactly once, now or later; the request
	// is answered when the last one is. pending counts one extra until
	// every partition has been started, so an early answer cannot finish
	// the request while others are still to start.
	pending := 1
	finishOne := func() {
		pending--
		if pending == 0 {
			x.respond(resp)
		}
	}
	for ti, t := range req.Topics {
		for pi, rp := range t.Partitions {
			answer := &resp.Topics[ti].Partitions[pi]
			if metadata.IsInternalTopic(t.Topic) {
				// As Kafka's ReplicaManager refuses it, whatever the
				// topic's cleanup policy: deleting __consumer_offsets'
				// records would lose committed offsets at the next load.
				answer.ErrorCode = kerr.InvalidTopicException.Code
				continue
			}
			p, err := b.leaderPartition(partitionKey{topic: t.Topic, partition: rp.Partition})
			if err != nil {
				answer.ErrorCode = errorCode(err)
				continue
			}
			pending++
			p.DeleteRecords(rp.Offset, timeout, func(lowWatermark int64, err error) {
				answer.LowWatermark = lowWatermark
				answer.ErrorCode = errorCode(err)
				finishOne()
			})
		}
	}
	finishOne()
}
