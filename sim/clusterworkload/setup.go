package clusterworkload

import (
	"fmt"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
	"sluice/jepsen/history"
	"sluice/sim/scenario"
)

// Request versions the admin client sends: the newest Sluice serves.
const (
	createTopicsVersion = 7
	metadataVersion     = 12
)

// pageCacheFlushMessages is flush.messages for a page-cache topic: Kafka's
// default, which leaves syncing to the operating system.
const pageCacheFlushMessages = "9223372036854775807"

// setUp creates the scenario's topics once the cluster has a controller
// and waits until every partition has a leader, learning each partition's
// replica set. It reports whether that happened within setupMax.
func (r *run) setUp() bool {
	deadline := r.kernel.Now() + int64(setupMax)
	created, ready := false, false
	attempt := 0
	var create, describe func()
	retry := r.retryAdmin
	create = func() {
		attempt++
		r.admin.request(clientAddress(1+attempt%len(r.nodes)), r.createTopicsRequest(), func(resp kmsg.Response, err error) {
			if err != nil || !r.topicsCreated(resp.(*kmsg.CreateTopicsResponse)) {
				retry(create)
				return
			}
			created = true
			describe()
		})
	}
	describe = func() {
		attempt++
		r.admin.request(clientAddress(1+attempt%len(r.nodes)), r.metadataRequest(), func(resp kmsg.Response, err error) {
			if err != nil || !r.learnReplicas(resp.(*kmsg.MetadataResponse)) {
				retry(describe)
				return
			}
			ready = true
		})
	}
	create()
	if !r.runWhile(deadline, func() bool { return !ready }) {
		if r.violation == nil {
			r.fail("setup", fmt.Sprintf("topics created=%v, every partition led=%v within %v; nodes:%s", created, ready, setupMax, r.describeNodes()))
		}
		return false
	}
	r.note("topics created and led")
	return true
}

func (r *run) createTopicsRequest() *kmsg.CreateTopicsRequest {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = createTopicsVersion
	req.TimeoutMillis = int32(adminTimeout.Milliseconds())
	for _, t := range r.scenario.Topics {
		req.Topics = append(req.Topics, r.createTopicRequest(t))
	}
	return req
}

// createTopicRequest is one topic of a CreateTopics request, with the
// scenario's settings.
func (r *run) createTopicRequest(t scenario.Topic) kmsg.CreateTopicsRequestTopic {
	topic := kmsg.NewCreateTopicsRequestTopic()
	topic.Topic = t.Name
	topic.NumPartitions = int32(t.Partitions)
	topic.ReplicationFactor = int16(t.Replication)
	configs := [][2]string{{metadata.ConfigMinInsyncReplicas, strconv.Itoa(t.MinInsync)}}
	if segmentBytes := r.scenario.Logs.SegmentBytes; segmentBytes != 0 {
		configs = append(configs, [2]string{metadata.ConfigSegmentBytes, strconv.Itoa(segmentBytes)})
	}
	if retentionBytes := r.scenario.Logs.RetentionBytes; retentionBytes != 0 {
		configs = append(configs, [2]string{metadata.ConfigRetentionBytes, strconv.Itoa(retentionBytes)})
	}
	if t.PageCache {
		configs = append(configs, [2]string{metadata.ConfigFlushMessages, pageCacheFlushMessages})
	}
	if t.Unclean {
		configs = append(configs, [2]string{metadata.ConfigUncleanLeaderElection, "true"})
	}
	for _, c := range configs {
		config := kmsg.NewCreateTopicsRequestTopicConfig()
		value := c[1]
		config.Name, config.Value = c[0], &value
		topic.Configs = append(topic.Configs, config)
	}
	return topic
}

// topicsCreated reports whether every topic exists now: created by this
// answer, or by an earlier attempt whose answer was lost.
func (r *run) topicsCreated(resp *kmsg.CreateTopicsResponse) bool {
	for _, t := range resp.Topics {
		if t.ErrorCode != 0 && t.ErrorCode != kerr.TopicAlreadyExists.Code {
			r.note(fmt.Sprintf("creating %s: %v", t.Topic, kerr.ErrorForCode(t.ErrorCode)))
			return false
		}
	}
	return len(resp.Topics) == len(r.scenario.Topics)
}

func (r *run) metadataRequest() *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = metadataVersion
	for _, t := range r.scenario.Topics {
		topic := kmsg.NewMetadataRequestTopic()
		topic.Topic = kmsg.StringPtr(t.Name)
		req.Topics = append(req.Topics, topic)
	}
	return req
}

// learnReplicas records each partition's replica set from a Metadata
// answer, and reports whether every partition of every topic has a leader
// there.
func (r *run) learnReplicas(resp *kmsg.MetadataResponse) bool {
	led := 0
	for _, t := range resp.Topics {
		if t.Topic == nil || t.ErrorCode != 0 {
			return false
		}
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 || p.Leader < 0 {
				return false
			}
			tp := history.TopicPartition{Topic: *t.Topic, Partition: p.Partition}
			r.replicas[tp] = append([]int32(nil), p.Replicas...)
			led++
		}
	}
	want := 0
	for _, t := range r.scenario.Topics {
		want += t.Partitions
	}
	return led == want
}

// allPartitions lists every partition of every topic the clients may use,
// in order: a recreated topic is the operator's alone, checked on its own
// (recreate_check.go).
func (r *run) allPartitions() []history.TopicPartition {
	var all []history.TopicPartition
	for _, t := range r.scenario.Topics {
		if t.Recreated() {
			continue
		}
		for p := range int32(r.partitionCount(t)) {
			all = append(all, history.TopicPartition{Topic: t.Name, Partition: p})
		}
	}
	return all
}

// describeNodes says where each node is, for a failure's detail.
func (r *run) describeNodes() string {
	text := ""
	for _, n := range r.nodes {
		text += " " + n.describe()
	}
	return text
}
