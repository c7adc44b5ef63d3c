package broker

// Metadata (key 3), versions 0-12.
//
// Answers from the broker's applied metadata image: the brokers, the
// controller (a live broker: see controllerIDForClients in cluster.go),
// and each requested topic's partitions with leader, leader epoch,
// replicas and ISR. A request for an unknown topic creates it when
// auto.create.topics.enable is on and the client allows it
// (AllowAutoTopicCreation, v4+; always allowed before v4, as in Kafka); the
// answer then waits until the creation has committed, so the client sees
// the new topic's leaders at once.
//
// Version notes: v0 treats an empty topic list as "all topics"; from v1 a
// null list means all and an empty one none; v1 controller id and rack; v2
// cluster id; v5 offline replicas; v7 leader epochs; v8 authorized
// operations when asked (every operation: no authorizer, as Kafka answers
// without one; authorized_operations.go), the cluster's in v8-v10 only; v9
// flexible; v10 topic ids (lookup by id from v12).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

func init() {
	registerAPI(&api{key: 3, advertisedMin: 0, honouredMin: 0, max: 12, handle: (*Broker).handleMetadata})
}

func (b *Broker) handleMetadata(x *exchange) {
	req := x.request.Body.(*kmsg.MetadataRequest)
	allTopics := req.Topics == nil || (req.Version == 0 && len(req.Topics) == 0)
	mayCreate := b.config.AutoCreateTopics && (req.Version < 4 || req.AllowAutoTopicCreation)
	if !allTopics && mayCreate {
		var missing []string
		for _, t := range req.Topics {
			// Internal topics are created by the broker itself, with
			// their own settings (see ensureOffsetsTopic), never by a
			// client's Metadata request.
			if t.Topic != nil && *t.Topic != "" && metadata.ValidTopicName(*t.Topic) == nil && !metadata.IsInternalTopic(*t.Topic) {
				if _, exists := b.image.Topics[*t.Topic]; !exists {
					missing = append(missing, *t.Topic)
				}
			}
		}
		if len(missing) > 0 {
			b.autoCreateTopics(missing, func() { x.respond(b.metadataAnswer(req, allTopics)) })
			return
		}
	}
	x.respond(b.metadataAnswer(req, allTopics))
}

// autoCreateTopics creates topics with the broker's defaults, then calls
// done whatever the outcome (a racing creation by someone else is fine).
func (b *Broker) autoCreateTopics(names []string, done func()) {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version = 7
	req.TimeoutMillis = 30_000
	for _, name := range names {
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic = name
		t.NumPartitions = -1
		t.ReplicationFactor = -1
		req.Topics = append(req.Topics, t)
	}
	b.createTopics(req, func(resp *kmsg.CreateTopicsResponse) {
		for _, t := range resp.Topics {
			if t.ErrorCode != 0 && t.ErrorCode != kerr.TopicAlreadyExists.Code {
				b.log.Info("auto-creating topic failed", "topic", t.Topic, "error", kerr.ErrorForCode(t.ErrorCode))
			}
		}
		done()
	})
}

func (b *Broker) metadataAnswer(req *kmsg.MetadataRequest, allTopics bool) *kmsg.MetadataResponse {
	resp := b.metadataTopics(req, allTopics)
	if req.IncludeClusterAuthorizedOperations && req.Version >= 8 && req.Version <= 10 {
		resp.AuthorizedOperations = clusterOperations
	}
	if req.IncludeTopicAuthorizedOperations && req.Version >= 8 {
		for i := range resp.Topics {
			resp.Topics[i].AuthorizedOperations = topicOperations
		}
	}
	return resp
}

// metadataTopics is the answer's brokers, controller and topics.
func (b *Broker) metadataTopics(req *kmsg.MetadataRequest, allTopics bool) *kmsg.MetadataResponse {
	resp := req.ResponseKind().(*kmsg.MetadataResponse)
	resp.ClusterID = &b.clusterID
	resp.ControllerID = b.controllerIDForClients()
	resp.Brokers = b.metadataBrokers()
	if allTopics {
		for _, name := range b.image.TopicNames() {
			resp.Topics = append(resp.Topics, b.metadataTopic(b.image.Topics[name]))
		}
		return resp
	}
	for _, rt := range req.Topics {
		var t *metadata.Topic
		switch {
		case rt.Topic != nil && *rt.Topic != "":
			t = b.image.Topics[*rt.Topic]
		case rt.TopicID != [16]byte{}:
			t = b.image.TopicsByID[metadata.TopicID(rt.TopicID)]
		}
		if t != nil {
			resp.Topics = append(resp.Topics, b.metadataTopic(t))
			continue
		}
		answer := kmsg.NewMetadataResponseTopic()
		answer.Topic = rt.Topic
		answer.TopicID = rt.TopicID
		answer.ErrorCode = kerr.UnknownTopicOrPartition.Code
		if rt.Topic != nil && metadata.ValidTopicName(*rt.Topic) != nil {
			answer.ErrorCode = kerr.InvalidTopicException.Code
		} else if rt.Topic == nil {
			answer.ErrorCode = kerr.UnknownTopicID.Code
		}
		resp.Topics = append(resp.Topics, answer)
	}
	return resp
}

// metadataBrokers lists the registered, unfenced brokers, and this broker
// even before its registration has committed: a client talking to it must
// find it in the answer.
func (b *Broker) metadataBrokers() []kmsg.MetadataResponseBroker {
	ids := b.image.BrokerIDs()
	brokers := make([]kmsg.MetadataResponseBroker, 0, len(ids)+1)
	selfListed := false
	for _, id := range ids {
		mb := b.image.Brokers[id]
		if mb.Fenced && id != b.config.NodeID {
			continue
		}
		answer := kmsg.NewMetadataResponseBroker()
		answer.NodeID = id
		answer.Host = mb.Host
		answer.Port = mb.Port
		if mb.Rack != "" {
			answer.Rack = &mb.Rack
		}
		selfListed = selfListed || id == b.config.NodeID
		brokers = append(brokers, answer)
	}
	if !selfListed {
		answer := kmsg.NewMetadataResponseBroker()
		answer.NodeID = b.config.NodeID
		answer.Host = b.config.AdvertisedHost
		answer.Port = b.config.AdvertisedPort
		brokers = append(brokers, answer)
	}
	return brokers
}

// metadataTopic is a topic's answer. It lends the answer the image's
// replica lists rather than copying them: an answer is encoded as soon as
// it is built (handleMetadata), before the image can change.
func (b *Broker) metadataTopic(t *metadata.Topic) kmsg.MetadataResponseTopic {
	answer := kmsg.NewMetadataResponseTopic()
	name := t.Name
	answer.Topic = &name
	answer.TopicID = t.ID
	answer.IsInternal = metadata.IsInternalTopic(t.Name)
	answer.Partitions = make([]kmsg.MetadataResponseTopicPartition, 0, len(t.Partitions))
	for _, p := range t.Partitions {
		rp := kmsg.NewMetadataResponseTopicPartition()
		rp.Partition = p.Index
		rp.Leader = p.Leader
		rp.LeaderEpoch = p.LeaderEpoch
		rp.Replicas = p.Replicas
		rp.ISR = p.ISR
		for _, r := range p.Replicas {
			if broker, ok := b.image.Brokers[r]; (!ok || broker.Fenced) && r != b.config.NodeID {
				rp.OfflineReplicas = append(rp.OfflineReplicas, r)
			}
		}
		if p.Leader < 0 {
			rp.ErrorCode = kerr.LeaderNotAvailable.Code
		}
		answer.Partitions = append(answer.Partitions, rp)
	}
	return answer
}
