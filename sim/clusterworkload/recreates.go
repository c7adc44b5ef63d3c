package clusterworkload

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
	"sluice/core/metadata"
	"sluice/jepsen/history"
	"sluice/sim/scenario"
	"sluice/sim/simclient"
)

// Deleting a topic and creating it again (scenario.Topic's RecreateEvery):
// the operator's own topic lives through incarnations, each a new topic
// of the same name, with a new id and an empty log. Its first incarnation
// is created with the others at setup. Then the operator writes one
// record to each partition of the incarnation (Produce with acks=all to
// the partition's leader, a few attempts, each value naming the
// incarnation), and every RecreateEvery in the safety phase deletes the
// topic (DeleteTopics, node after node, until one answers that it is
// gone), creates it again (CreateTopics, likewise), learns the new
// incarnation's id, replicas and leaders (Metadata, until a node shows
// an id no deleted incarnation had and every partition led), and writes
// to it. It deletes by topic id (see deleteTopic).
//
// What a deletion promises: the old topic's records are gone for good.
// Its replicas sit in directories named by topic name and partition only,
// so a node whose deletion of them did not last (a power loss before the
// renames were synced, or a node down while it happened) finds them again
// under the new topic's name. Once the cluster has converged, every
// replica of the last incarnation must hold the same log, with every
// record acknowledged to that incarnation at the offset it was
// acknowledged at, and no record acknowledged to an earlier one
// (deleted-topic-resurrected). A write whose answer never came may have
// landed in a later incarnation (the request reached a broker after the
// re-creation), so its value is allowed anywhere.

const (
	deleteTopicsVersion = 6
	// produceVersion is the operator's Produce: the newest Sluice
	// serves.
	produceVersion = 9
	// recreateWriteAttemptsMax bounds the attempts of one partition's
	// write in one incarnation, each with a value of its own.
	recreateWriteAttemptsMax = 3
	// confirmFetchVersion is the operator's Fetch: a version that names
	// the topic by id (13 and up), the newest Sluice serves.
	confirmFetchVersion = 15
	// confirmAttemptsMax bounds the reads that confirm one write.
	confirmAttemptsMax = 4
)

// recreation is one recreated topic's operator.
type recreation struct {
	topic scenario.Topic
	// incarnation counts the topic's incarnations: 1 is the one setup
	// created.
	incarnation int
	// id is the current incarnation's id once learned; deleted are the
	// ids of the incarnations deleted.
	id      metadata.TopicID
	deleted []metadata.TopicID
	// leaders are the current incarnation's partition leaders.
	leaders map[int32]int32
	// busy is set while a step is under way: the liveness phase waits
	// for none to be, so the topic exists and is written when checked.
	busy bool
	// writing counts the partitions whose write to the current
	// incarnation is not yet settled.
	writing int
	// writes are every value the operator sent, in order; byValue
	// indexes them.
	writes  []recreatedWrite
	byValue map[string]int
	// requests counts the admin requests sent, to spread them over the
	// nodes; recreated counts the incarnations created and learned.
	requests, recreated int
}

// recreatedWrite is one value the operator sent to one incarnation.
type recreatedWrite struct {
	value       string
	incarnation int
	partition   int32
	// acked is set when a leader acknowledged it, at offset. Produce
	// names the topic by name only (before v13), so a broker whose
	// metadata still had an older incarnation may have acknowledged it
	// there; confirmed is set once a read by the incarnation's id found
	// it at offset.
	acked, confirmed bool
	offset           int64
}

// startRecreates sets every recreated topic's operator going: it learns
// and writes the first incarnation at once, and deletes it after
// RecreateEvery.
func (r *run) startRecreates() {
	for _, t := range r.scenario.Topics {
		if !t.Recreated() {
			continue
		}
		rc := &recreation{topic: t, incarnation: 1, byValue: map[string]int{}}
		r.recreations = append(r.recreations, rc)
		rc.busy = true
		r.describeIncarnation(rc)
	}
}

// recreating reports whether an operator is in the middle of a step.
func (r *run) recreating() bool {
	return slices.ContainsFunc(r.recreations, func(rc *recreation) bool { return rc.busy })
}

// nextNode picks the node an operator's next request goes to.
func (rc *recreation) nextNode(nodes int) int {
	rc.requests++
	return 1 + rc.requests%nodes
}

// scheduleRecreate deletes and creates the topic again after
// RecreateEvery, unless the safety phase is over by then.
func (r *run) scheduleRecreate(rc *recreation) {
	rc.busy = false
	r.kernel.Schedule(int64(rc.topic.RecreateEvery), nil, "workload.recreate-topic", func() {
		if r.stopSending || r.violation != nil {
			return
		}
		rc.busy = true
		r.deleteTopic(rc)
	})
}

// deleteTopic asks a node to delete the current incarnation until one
// answers that it is gone: deleted now, or by an earlier attempt whose
// answer was lost (UNKNOWN_TOPIC_ID from the controller). It names the
// incarnation by its id (DeleteTopics v6, KIP-516), as an operator must
// when a name is reused: an attempt that timed out may still be in a
// broker's forwarding queue, and by name it would delete whatever topic
// has the name when it reaches the controller, a later incarnation too.
func (r *run) deleteTopic(rc *recreation) {
	r.deleteByID(rc, rc.id, func() {
		rc.deleted = append(rc.deleted, rc.id)
		rc.id = metadata.TopicID{}
		rc.incarnation++
		r.createTopic(rc)
	})
}

// deleteByID sends DeleteTopics for id to node after node until one
// answers that it is gone, then calls deleted.
func (r *run) deleteByID(rc *recreation, id metadata.TopicID, deleted func()) {
	if r.violation != nil {
		return
	}
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version = deleteTopicsVersion
	req.TimeoutMillis = int32(adminTimeout.Milliseconds())
	topic := kmsg.NewDeleteTopicsRequestTopic()
	topic.TopicID = id
	req.Topics = append(req.Topics, topic)
	node := rc.nextNode(len(r.nodes))
	r.admin.request(clientAddress(node), req, func(resp kmsg.Response, err error) {
		code := kerr.UnknownServerError.Code
		if err == nil {
			if ts := resp.(*kmsg.DeleteTopicsResponse).Topics; len(ts) == 1 {
				code = ts[0].ErrorCode
			}
		}
		if code != 0 && code != kerr.UnknownTopicID.Code {
			r.retryAdmin(func() { r.deleteByID(rc, id, deleted) })
			return
		}
		r.note(fmt.Sprintf("n%d: %s topic id %s deleted (%v)", node, rc.topic.Name, id, kerr.ErrorForCode(code)))
		deleted()
	})
}

// createTopic asks a node to create the topic again until one answers
// that it exists: created now, or by an earlier attempt whose answer was
// lost (TOPIC_ALREADY_EXISTS, after the deletion was confirmed).
func (r *run) createTopic(rc *recreation) {
	if r.violation != nil {
		return
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = createTopicsVersion
	req.TimeoutMillis = int32(adminTimeout.Milliseconds())
	req.Topics = append(req.Topics, r.createTopicRequest(rc.topic))
	node := rc.nextNode(len(r.nodes))
	r.admin.request(clientAddress(node), req, func(resp kmsg.Response, err error) {
		code := kerr.UnknownServerError.Code
		if err == nil {
			if ts := resp.(*kmsg.CreateTopicsResponse).Topics; len(ts) == 1 {
				code = ts[0].ErrorCode
			}
		}
		if code != 0 && code != kerr.TopicAlreadyExists.Code {
			r.retryAdmin(func() { r.createTopic(rc) })
			return
		}
		r.note(fmt.Sprintf("n%d: %s incarnation %d created (%v)", node, rc.topic.Name, rc.incarnation, kerr.ErrorForCode(code)))
		r.describeIncarnation(rc)
	})
}

// describeIncarnation asks a node for the topic until one shows an
// incarnation no deletion took, with every partition led, and learns its
// id, replicas and leaders; then the operator writes to it. A node that
// knows no topic of the name sends the operator back to creating it: a
// TOPIC_ALREADY_EXISTS may have come from a controller deposed before the
// deletion that had not yet noticed, so the creation it refused never
// happened. (Sluice's controller now commits a no-op before such an
// answer, which a deposed one cannot; Kafka's answers from its image, and
// an operator must not count on either.)
func (r *run) describeIncarnation(rc *recreation) {
	if r.violation != nil {
		return
	}
	req := kmsg.NewPtrMetadataRequest()
	req.Version = metadataVersion
	topic := kmsg.NewMetadataRequestTopic()
	topic.Topic = kmsg.StringPtr(rc.topic.Name)
	req.Topics = append(req.Topics, topic)
	r.admin.request(clientAddress(rc.nextNode(len(r.nodes))), req, func(resp kmsg.Response, err error) {
		if err == nil && rc.incarnation > 1 && topicUnknown(resp.(*kmsg.MetadataResponse)) {
			r.retryAdmin(func() { r.createTopic(rc) })
			return
		}
		if id, stale := r.deletedIDShown(rc, resp, err); stale {
			// Either this node has not applied the deletion yet, or the
			// UNKNOWN_TOPIC_ID that confirmed it came from a deposed
			// controller that never knew the incarnation. Deleting it
			// again settles which, and is harmless in the first case.
			r.retryAdmin(func() { r.deleteByID(rc, id, func() { r.createTopic(rc) }) })
			return
		}
		if err != nil || !r.learnIncarnation(rc, resp.(*kmsg.MetadataResponse)) {
			r.retryAdmin(func() { r.describeIncarnation(rc) })
			return
		}
		if rc.incarnation > 1 {
			rc.recreated++
		}
		r.note(fmt.Sprintf("%s incarnation %d is topic id %s", rc.topic.Name, rc.incarnation, rc.id))
		rc.writing = rc.topic.Partitions
		for p := range int32(rc.topic.Partitions) {
			r.writeIncarnation(rc, p, 0)
		}
	})
}

// deletedIDShown returns the id a Metadata answer shows for the topic if
// it is one the operator deleted.
func (r *run) deletedIDShown(rc *recreation, resp kmsg.Response, err error) (metadata.TopicID, bool) {
	if err != nil {
		return metadata.TopicID{}, false
	}
	topics := resp.(*kmsg.MetadataResponse).Topics
	if len(topics) != 1 || topics[0].ErrorCode != 0 {
		return metadata.TopicID{}, false
	}
	id := metadata.TopicID(topics[0].TopicID)
	return id, slices.Contains(rc.deleted, id)
}

// topicUnknown reports whether a Metadata answer for one topic says
// there is none of the name.
func topicUnknown(resp *kmsg.MetadataResponse) bool {
	return len(resp.Topics) == 1 && resp.Topics[0].ErrorCode == kerr.UnknownTopicOrPartition.Code
}

// learnIncarnation takes the current incarnation from a Metadata answer,
// and reports whether it showed one, wholly led.
func (r *run) learnIncarnation(rc *recreation, resp *kmsg.MetadataResponse) bool {
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 || len(resp.Topics[0].Partitions) != rc.topic.Partitions {
		return false
	}
	t := resp.Topics[0]
	id := metadata.TopicID(t.TopicID)
	if id.IsZero() || slices.Contains(rc.deleted, id) {
		return false
	}
	for _, p := range t.Partitions {
		if p.ErrorCode != 0 || p.Leader < 0 || p.Partition < 0 || int(p.Partition) >= rc.topic.Partitions {
			return false
		}
	}
	rc.id, rc.leaders = id, map[int32]int32{}
	for _, p := range t.Partitions {
		rc.leaders[p.Partition] = p.Leader
		r.replicas[history.TopicPartition{Topic: rc.topic.Name, Partition: p.Partition}] = slices.Clone(p.Replicas)
	}
	return true
}

// writeIncarnation writes one value to a partition of the current
// incarnation: to its leader first, then to its other replicas, each
// attempt with a value of its own. Once every partition's write is
// settled the operator waits for its next re-creation.
func (r *run) writeIncarnation(rc *recreation, partition int32, attempt int) {
	if r.violation != nil {
		return
	}
	w := recreatedWrite{
		value:       fmt.Sprintf("%s/%d/%d/%d", rc.topic.Name, rc.incarnation, partition, len(rc.writes)),
		incarnation: rc.incarnation, partition: partition,
	}
	index := len(rc.writes)
	rc.writes = append(rc.writes, w)
	rc.byValue[w.value] = index
	replicas := r.replicas[history.TopicPartition{Topic: rc.topic.Name, Partition: partition}]
	node := rc.leaders[partition]
	if attempt > 0 && len(replicas) > 0 {
		node = replicas[(slices.Index(replicas, node)+attempt)%len(replicas)]
	}
	req := r.recreatedProduceRequest(rc.topic.Name, partition, w.value)
	r.admin.request(clientAddress(int(node)), req, func(resp kmsg.Response, err error) {
		code, offset := kerr.UnknownServerError.Code, int64(-1)
		if err == nil {
			if ts := resp.(*kmsg.ProduceResponse).Topics; len(ts) == 1 && len(ts[0].Partitions) == 1 {
				code, offset = ts[0].Partitions[0].ErrorCode, ts[0].Partitions[0].BaseOffset
			}
		}
		switch {
		case code == 0:
			rc.writes[index].acked, rc.writes[index].offset = true, offset
			r.note(fmt.Sprintf("n%d acknowledged %s at %d", node, w.value, offset))
			r.confirmWrite(rc, index, 0)
		case attempt+1 < recreateWriteAttemptsMax:
			r.retryAdmin(func() { r.writeIncarnation(rc, partition, attempt+1) })
		default:
			r.writeSettled(rc)
		}
	})
}

// writeSettled counts one partition's write settled: confirmed,
// acknowledged but not confirmed, or out of attempts. Once every
// partition's is, the operator waits for its next re-creation.
func (r *run) writeSettled(rc *recreation) {
	if rc.writing--; rc.writing == 0 {
		r.scheduleRecreate(rc)
	}
}

// confirmWrite reads an acknowledged write back by the incarnation's
// topic id (Fetch v13 and up), from the replicas in turn: a broker whose
// metadata has another topic of the name answers UNKNOWN_TOPIC_ID, and
// one that leads no longer NOT_LEADER_OR_FOLLOWER.
func (r *run) confirmWrite(rc *recreation, index, attempt int) {
	if r.violation != nil {
		return
	}
	w := rc.writes[index]
	replicas := r.replicas[history.TopicPartition{Topic: rc.topic.Name, Partition: w.partition}]
	node := rc.leaders[w.partition]
	if attempt > 0 && len(replicas) > 0 {
		node = replicas[(slices.Index(replicas, node)+attempt)%len(replicas)]
	}
	req := kmsg.NewPtrFetchRequest()
	req.Version = confirmFetchVersion
	req.ReplicaID = -1
	req.MaxBytes = 1 << 20
	topic := kmsg.NewFetchRequestTopic()
	topic.TopicID = rc.id
	partition := kmsg.NewFetchRequestTopicPartition()
	partition.Partition, partition.FetchOffset, partition.PartitionMaxBytes = w.partition, w.offset, 1<<20
	partition.CurrentLeaderEpoch, partition.LastFetchedEpoch, partition.LogStartOffset = -1, -1, -1
	topic.Partitions = append(topic.Partitions, partition)
	req.Topics = append(req.Topics, topic)
	r.admin.request(clientAddress(int(node)), req, func(resp kmsg.Response, err error) {
		if err == nil && fetchedValueAt(resp.(*kmsg.FetchResponse), w.offset) == w.value {
			rc.writes[index].confirmed = true
			r.note(fmt.Sprintf("n%d confirmed %s at %d in topic id %s", node, w.value, w.offset, rc.id))
			r.writeSettled(rc)
			return
		}
		if attempt+1 < confirmAttemptsMax {
			r.retryAdmin(func() { r.confirmWrite(rc, index, attempt+1) })
			return
		}
		r.note(fmt.Sprintf("%s acknowledged at %d not found in topic id %s", w.value, w.offset, rc.id))
		r.writeSettled(rc)
	})
}

// fetchedValueAt is the value of the record at offset in a one-partition
// Fetch answer, or "" when it holds none there.
func fetchedValueAt(resp *kmsg.FetchResponse, offset int64) string {
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		return ""
	}
	for s := (batch.Scanner{Buf: resp.Topics[0].Partitions[0].RecordBatches}); s.Next(); {
		records, err := batch.Records(s.Batch())
		if err != nil {
			return ""
		}
		for _, record := range records {
			if s.Header().BaseOffset+int64(record.OffsetDelta) == offset {
				return string(record.Value)
			}
		}
	}
	return ""
}

// recreatedProduceRequest is one record, acks=all, without a producer id.
func (r *run) recreatedProduceRequest(topic string, partition int32, value string) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version = produceVersion
	req.Acks = -1
	req.TimeoutMillis = int32(adminTimeout.Milliseconds())
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = batch.Build(batch.Spec{
		// Stamped as a client stamps it: a record of 1970 would be
		// past any retention.ms the moment it is written.
		BaseTimestamp: simclient.WallClockAt(r.kernel.Now()).UnixMilli(),
		ProducerID:    batch.NoProducerID,
		Records:       []batch.Record{{Value: []byte(value)}},
	})
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return req
}
