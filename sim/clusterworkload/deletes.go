package clusterworkload

import (
	"fmt"
	"math/rand/v2"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/jepsen/checker"
	"sluice/jepsen/history"
	"sluice/sim/kernel"
	"sluice/sim/scenario"
)

// Deleting consumed records (scenario.Topic's DeleteEvery): every
// DeleteEvery in the safety phase an operator picks one of the topic's
// partitions and deletes the records the group has consumed there, with
// DeleteRecords up to the highest offset a member knows the group
// committed. The request goes to one replica after another until the
// leader answers: with the new log start (the low watermark), or an
// error, and after deleteAttemptsMax tries the round gives up.
//
// An answer with a low watermark is a promise: nothing below it is
// readable any more, whatever crashes or leader changes follow. The
// checker's deleted-records-served holds the history to it: no poll
// invoked after the answer returns a record below it. Records deleted this way
// are not lost (deletedBelow tells the checks where each partition's
// records were deleted, as for retention), and the group had read them.
//
// A group commits where a batch ends, so when the topic's producers batch
// the operator deletes up to a few records short of the commit, from a
// stream of its own (insideRNG): the new log start then lies inside a
// batch, which every replica keeps whole while hiding what lies below the
// start.

// deleteAttemptsMax bounds the replicas one round asks.
const deleteAttemptsMax = 6

// deleteRecordsVersion is the newest DeleteRecords Sluice serves.
const deleteRecordsVersion = 2

// deleter is one topic's operator.
type deleter struct {
	topic scenario.Topic
	rng   *rand.Rand
	// insideRNG draws how far short of the commit a deletion stops; nil
	// unless a producer batches to the topic.
	insideRNG *rand.Rand
}

// deleteShortMax bounds how many records short of the group's commit a
// deletion stops, when the topic's producers batch.
const deleteShortMax = 8

// startDeletes sets every deleting topic's operator going.
func (r *run) startDeletes() {
	for _, t := range r.scenario.Topics {
		if t.DeleteEvery == 0 {
			continue
		}
		d := &deleter{topic: t, rng: kernel.NewRand(r.scenario.Seed, "workload/deletes/"+t.Name)}
		if r.batchesTo(t.Name) {
			d.insideRNG = kernel.NewRand(r.scenario.Seed, "workload/deletes-inside/"+t.Name)
		}
		r.kernel.Schedule(int64(t.DeleteEvery), nil, "workload.delete-records", func() { r.deleteRound(d) })
	}
}

// deleteRound deletes what the group consumed from one partition, and
// schedules the next round, until the liveness phase.
func (r *run) deleteRound(d *deleter) {
	if r.stopSending || r.violation != nil {
		return
	}
	r.kernel.Schedule(int64(d.topic.DeleteEvery), nil, "workload.delete-records", func() { r.deleteRound(d) })
	tp := history.TopicPartition{Topic: d.topic.Name, Partition: int32(d.rng.IntN(r.partitionCount(d.topic)))}
	offset := r.groupCommitted(tp)
	if offset <= 0 || len(r.replicas[tp]) == 0 {
		return
	}
	if d.insideRNG != nil {
		offset -= d.insideRNG.Int64N(min(offset, deleteShortMax))
	}
	r.counts.deletesSent++
	r.deleteRecords(tp, offset, d.rng.IntN(len(r.replicas[tp])), 0)
}

// batchesTo reports whether some producer sends batches of several
// records to the topic.
func (r *run) batchesTo(topic string) bool {
	for _, p := range r.scenario.Clients.Producers {
		if p.Topic == topic && p.BatchMax > 1 {
			return true
		}
	}
	return false
}

// groupCommitted is the highest offset of tp a member of a group on its
// topic knows the group committed, or 0.
func (r *run) groupCommitted(tp history.TopicPartition) int64 {
	committed := int64(0)
	for _, g := range r.groups {
		if g.settings.Topic != tp.Topic {
			continue
		}
		for _, m := range g.members {
			committed = max(committed, m.consumer.Committed(tp))
		}
	}
	return committed
}

// deleteRecords asks replica number next of tp to delete below offset,
// and the following replica after a refusal.
func (r *run) deleteRecords(tp history.TopicPartition, offset int64, next, attempt int) {
	replicas := r.replicas[tp]
	node := replicas[next%len(replicas)]
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.Version = deleteRecordsVersion
	req.TimeoutMillis = int32(adminTimeout.Milliseconds())
	topic := kmsg.NewDeleteRecordsRequestTopic()
	topic.Topic = tp.Topic
	partition := kmsg.NewDeleteRecordsRequestTopicPartition()
	partition.Partition, partition.Offset = tp.Partition, offset
	topic.Partitions = append(topic.Partitions, partition)
	req.Topics = append(req.Topics, topic)
	r.admin.request(clientAddress(int(node)), req, func(resp kmsg.Response, err error) {
		code, lowWatermark := kerr.UnknownServerError.Code, int64(-1)
		if err == nil {
			if ts := resp.(*kmsg.DeleteRecordsResponse).Topics; len(ts) == 1 && len(ts[0].Partitions) == 1 {
				code, lowWatermark = ts[0].Partitions[0].ErrorCode, ts[0].Partitions[0].LowWatermark
			}
		}
		if code == 0 {
			r.deletions = append(r.deletions, checker.DeleteAnswered{Partition: tp, LowWatermark: lowWatermark, At: r.kernel.Now()})
			r.note(fmt.Sprintf("n%d deleted %s below %d (asked %d)", node, tp, lowWatermark, offset))
			return
		}
		if attempt+1 < deleteAttemptsMax && !r.stopSending {
			r.retryAdmin(func() { r.deleteRecords(tp, offset, next+1, attempt+1) })
		}
	})
}
