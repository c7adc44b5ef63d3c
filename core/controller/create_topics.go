package controller

import (
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

// clusterMetadataTopic is the metadata log's name. Users may not create a
// topic by that name (its partition 0 would be the metadata log's own
// directory); Kafka refuses it too, though with TOPIC_AUTHORIZATION_FAILED.
const clusterMetadataTopic = "__cluster_metadata"

// CreateTopics answers CreateTopics (versions 2-7 semantics). Each topic is
// judged on its own, in Kafka's order, and the first rule it breaks is its
// answer:
//
//   - a name given twice in the request: INVALID_REQUEST for each;
//   - an invalid name, or the metadata log's: INVALID_TOPIC_EXCEPTION
//     (other names starting with "__" are allowed, as in Kafka);
//   - an existing name: TOPIC_ALREADY_EXISTS;
//   - a name that differs from an existing topic's only by '.' versus '_'
//     (their metric names would collide): INVALID_TOPIC_EXCEPTION;
//   - a config given twice or without a value: INVALID_REQUEST; an unknown
//     config or an invalid value: INVALID_CONFIG;
//   - a manual ReplicaAssignment with NumPartitions or ReplicationFactor
//     other than -1: INVALID_REQUEST; an assignment that is not partitions
//     0..n-1 each once, with the same number of distinct, registered
//     replicas, at least one unfenced: INVALID_REPLICA_ASSIGNMENT;
//   - ReplicationFactor 0 or below -1, or above the number of unfenced
//     brokers: INVALID_REPLICATION_FACTOR;
//   - NumPartitions 0 or below -1, or above partitionsPerTopicMax:
//     INVALID_PARTITIONS.
//
// -1 means the default (num.partitions, default.replication.factor). A
// request creating more than partitionsPerRequestMax partitions in all
// fails as a whole with INVALID_PARTITIONS, before any of that.
//
// Every topic that passes is created by one proposal: its TopicRecord, its
// ConfigRecords (before the partitions, so that they open with their
// configs), and its PartitionRecords, leaders first replicas. With
// ValidateOnly nothing is proposed and the answer is the one creation
// would give, without a topic id. Answers (v5+) carry the partition count,
// replication factor and every config with its source.
func (c *Controller) CreateTopics(req *kmsg.CreateTopicsRequest, done func(*kmsg.CreateTopicsResponse)) {
	c.submitAdmin(func() ([]metadata.Record, func(*failure)) {
		plan := c.planTopicCreations(req)
		return plan.records, func(outcome *failure) { done(plan.answer(outcome)) }
	}, func(f *failure) {
		done(createTopicsPlan{request: req, results: sameFailureForAll(len(req.Topics), f)}.answer(nil))
	})
}

// createTopicsPlan is what a CreateTopics request will do: one result per
// requested topic, in request order, and the records of those created.
type createTopicsPlan struct {
	request *kmsg.CreateTopicsRequest
	results []*topicCreation
	records []metadata.Record
	// topicDefaults are the broker's topic config overrides, for answers.
	topicDefaults map[string]string
}

// topicCreation is the outcome planned for one requested topic: a failure,
// or the topic to create.
type topicCreation struct {
	failure           *failure
	id                metadata.TopicID
	partitions        int32
	replicationFactor int16
	configs           map[string]string
}

func sameFailureForAll(n int, f *failure) []*topicCreation {
	results := make([]*topicCreation, n)
	for i := range results {
		results[i] = &topicCreation{failure: f}
	}
	return results
}

func (c *Controller) planTopicCreations(req *kmsg.CreateTopicsRequest) createTopicsPlan {
	plan := createTopicsPlan{request: req, topicDefaults: c.config.TopicDefaults}
	if total := c.requestedPartitions(req); total > partitionsPerRequestMax {
		plan.results = sameFailureForAll(len(req.Topics), fail(kerr.InvalidPartitions,
			"the request creates %d partitions, more than %d at once", total, partitionsPerRequestMax))
		return plan
	}
	occurrences := map[string]int{}
	for _, t := range req.Topics {
		occurrences[t.Topic]++
	}
	collisions := c.collisionNames()
	var records []metadata.Record
	drawnIDs := map[metadata.TopicID]bool{}
	for _, t := range req.Topics {
		if occurrences[t.Topic] > 1 {
			plan.results = append(plan.results, &topicCreation{failure: fail(kerr.InvalidRequest, "topic %q is named more than once in the request", t.Topic)})
			continue
		}
		creation, assignments, isrs := c.planTopicCreation(t, collisions)
		plan.results = append(plan.results, creation)
		if creation.failure != nil {
			continue
		}
		if name, has := collisionName(t.Topic); has {
			collisions[name] = t.Topic
		}
		if req.ValidateOnly {
			continue
		}
		for creation.id.IsZero() || drawnIDs[creation.id] {
			creation.id = c.newTopicID()
		}
		drawnIDs[creation.id] = true
		records = append(records, metadata.Record{Topic: &metadata.TopicRecord{Name: t.Topic, ID: creation.id}})
		records = append(records, configChangeRecords(topicResource(t.Topic), nil, creation.configs)...)
		for p := range assignments {
			records = append(records, newPartitionRecord(creation.id, int32(p), assignments[p], isrs[p]))
		}
	}
	if len(records) > recordsPerOperationMax {
		tooBig := fail(kerr.InvalidRequest, "the request would write %d metadata records, more than %d; create fewer topics at once",
			len(records), recordsPerOperationMax)
		for _, result := range plan.results {
			if result.failure == nil {
				result.failure = tooBig
			}
		}
		records = nil
	}
	plan.records = records
	return plan
}

// requestedPartitions counts the partitions a request asks for, as Kafka
// does before looking at anything else.
func (c *Controller) requestedPartitions(req *kmsg.CreateTopicsRequest) int64 {
	total := int64(0)
	for _, t := range req.Topics {
		switch {
		case len(t.ReplicaAssignment) > 0:
			total += int64(len(t.ReplicaAssignment))
		case t.NumPartitions == -1:
			total += int64(c.defaultPartitions())
		case t.NumPartitions > 0:
			total += int64(t.NumPartitions)
		}
	}
	return total
}

// planTopicCreation judges one topic and, if it may be created, returns
// its replica assignment and each partition's ISR.
func (c *Controller) planTopicCreation(t kmsg.CreateTopicsRequestTopic, collisions map[string]string) (*topicCreation, [][]int32, [][]int32) {
	refused := func(f *failure) (*topicCreation, [][]int32, [][]int32) {
		return &topicCreation{failure: f}, nil, nil
	}
	if err := metadata.ValidTopicName(t.Topic); err != nil {
		return refused(fail(kerr.InvalidTopicException, "%v", err))
	}
	if t.Topic == clusterMetadataTopic {
		return refused(fail(kerr.InvalidTopicException, "%s is the metadata log's name and cannot be created", t.Topic))
	}
	if _, exists := c.image.Topics[t.Topic]; exists {
		return refused(fail(kerr.TopicAlreadyExists, "topic %q already exists", t.Topic))
	}
	if name, has := collisionName(t.Topic); has && collisions[name] != "" {
		return refused(fail(kerr.InvalidTopicException, "topic %q collides with existing topic %q ('.' and '_' are the same in metric names)",
			t.Topic, collisions[name]))
	}
	// As Kafka's controller takes them: a null value is INVALID_CONFIG
	// (not the malformed request it is to AlterConfigs), and a name given
	// twice keeps its last value (Kafka puts them in a map).
	configs := map[string]string{}
	for _, config := range t.Configs {
		if config.Value == nil {
			return refused(fail(kerr.InvalidConfig, "null value not supported for topic configs: %s", config.Name))
		}
		value, f := normalizedTopicConfigValue(config.Name, config.Value)
		if f != nil {
			return refused(f)
		}
		configs[config.Name] = value
	}
	if f := checkTopicConfigCombination(configs, c.config.TopicDefaults); f != nil {
		return refused(f)
	}
	var assignments, isrs [][]int32
	var f *failure
	if len(t.ReplicaAssignment) > 0 {
		assignments, isrs, f = c.manualTopicAssignment(t)
	} else {
		assignments, isrs, f = c.automaticTopicAssignment(t)
	}
	if f != nil {
		return refused(f)
	}
	return &topicCreation{
		partitions:        int32(len(assignments)),
		replicationFactor: int16(len(assignments[0])),
		configs:           configs,
	}, assignments, isrs
}

// manualTopicAssignment checks a ReplicaAssignment: partitions 0..n-1, in
// any order, each once.
func (c *Controller) manualTopicAssignment(t kmsg.CreateTopicsRequestTopic) ([][]int32, [][]int32, *failure) {
	if t.ReplicationFactor != -1 {
		return nil, nil, fail(kerr.InvalidRequest, "a manual partition assignment was given, but the replication factor is %d, not -1", t.ReplicationFactor)
	}
	if t.NumPartitions != -1 {
		return nil, nil, fail(kerr.InvalidRequest, "a manual partition assignment was given, but the number of partitions is %d, not -1", t.NumPartitions)
	}
	n := len(t.ReplicaAssignment)
	if n > partitionsPerTopicMax {
		return nil, nil, fail(kerr.InvalidPartitions, "the topic would have %d partitions, more than %d", n, partitionsPerTopicMax)
	}
	assignments := make([][]int32, n)
	isrs := make([][]int32, n)
	replicationFactor := 0
	for _, a := range t.ReplicaAssignment {
		if a.Partition < 0 || int(a.Partition) >= n {
			return nil, nil, fail(kerr.InvalidReplicaAssignment, "partitions must be numbered 0 to %d, found %d", n-1, a.Partition)
		}
		if assignments[a.Partition] != nil {
			return nil, nil, fail(kerr.InvalidReplicaAssignment, "partition %d is assigned more than once", a.Partition)
		}
		isr, f := c.checkManualReplicas(a.Partition, a.Replicas, replicationFactor)
		if f != nil {
			return nil, nil, f
		}
		replicationFactor = len(a.Replicas)
		assignments[a.Partition], isrs[a.Partition] = a.Replicas, isr
	}
	return assignments, isrs, nil
}

// automaticTopicAssignment places the topic's partitions over the usable
// brokers (placement.go).
func (c *Controller) automaticTopicAssignment(t kmsg.CreateTopicsRequestTopic) ([][]int32, [][]int32, *failure) {
	replicationFactor := int(t.ReplicationFactor)
	switch {
	case t.ReplicationFactor == -1:
		replicationFactor = int(c.defaultReplicationFactor())
	case t.ReplicationFactor < -1 || t.ReplicationFactor == 0:
		return nil, nil, fail(kerr.InvalidReplicationFactor, "replication factor must be larger than 0, or -1 for the default; got %d", t.ReplicationFactor)
	}
	partitions := t.NumPartitions
	switch {
	case t.NumPartitions == -1:
		partitions = c.defaultPartitions()
	case t.NumPartitions < -1 || t.NumPartitions == 0:
		return nil, nil, fail(kerr.InvalidPartitions, "number of partitions must be larger than 0, or -1 for the default; got %d", t.NumPartitions)
	}
	if partitions > partitionsPerTopicMax {
		return nil, nil, fail(kerr.InvalidPartitions, "the topic would have %d partitions, more than %d", partitions, partitionsPerTopicMax)
	}
	brokers := c.usableBrokers()
	if replicationFactor > len(brokers) {
		return nil, nil, fail(kerr.InvalidReplicationFactor, "%s", replicationFactorUnreachable(replicationFactor, len(brokers)))
	}
	assignments := randomPlacement(c.w.Entropy, brokers, 0, partitions, replicationFactor).place()
	// Every placed replica is on a usable broker, so all are in sync.
	return assignments, assignments, nil
}

// collisionName is the name Kafka's metrics would give a topic: '.' and
// '_' become the same. It reports false for names without either, which
// cannot collide.
func collisionName(topic string) (string, bool) {
	if !strings.ContainsAny(topic, "._") {
		return "", false
	}
	return strings.ReplaceAll(topic, ".", "_"), true
}

// collisionNames maps the collision name of every existing topic that has
// one to the topic's name.
func (c *Controller) collisionNames() map[string]string {
	names := map[string]string{}
	for _, topic := range c.image.TopicNames() {
		if name, has := collisionName(topic); has {
			names[name] = topic
		}
	}
	return names
}

// answer builds the CreateTopics answer; outcome is the commit's (nil when
// the records committed or there were none).
func (plan createTopicsPlan) answer(outcome *failure) *kmsg.CreateTopicsResponse {
	resp := plan.request.ResponseKind().(*kmsg.CreateTopicsResponse)
	for i, t := range plan.request.Topics {
		result := plan.results[i]
		answer := kmsg.NewCreateTopicsResponseTopic()
		answer.Topic = t.Topic
		f := result.failure
		if f == nil {
			f = outcome
		}
		if f != nil {
			answer.ErrorCode = f.errorCode()
			answer.ErrorMessage = f.messagePointer()
			resp.Topics = append(resp.Topics, answer)
			continue
		}
		answer.TopicID = result.id
		answer.NumPartitions = result.partitions
		answer.ReplicationFactor = result.replicationFactor
		for _, config := range EffectiveTopicConfigs(result.configs, plan.topicDefaults) {
			value := config.Value
			rc := kmsg.NewCreateTopicsResponseTopicConfig()
			rc.Name = config.Definition.Name
			rc.Value = &value
			rc.Source = int8(config.Source)
			rc.IsSensitive = config.Definition.Sensitive
			if rc.IsSensitive {
				rc.Value = nil
			}
			answer.Configs = append(answer.Configs, rc)
		}
		resp.Topics = append(resp.Topics, answer)
	}
	return resp
}

// topicResource names a topic as a config resource.
func topicResource(topic string) metadata.ConfigResource {
	return metadata.ConfigResource{Type: metadata.ResourceTopic, Name: topic}
}

// defaultPartitions is num.partitions; a zero Config means Kafka's 1.
func (c *Controller) defaultPartitions() int32 {
	return max(c.config.DefaultPartitions, 1)
}

// defaultReplicationFactor is default.replication.factor; a zero Config
// means Kafka's 1.
func (c *Controller) defaultReplicationFactor() int16 {
	return max(c.config.DefaultReplicationFactor, 1)
}
