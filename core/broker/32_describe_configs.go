package broker

// DescribeConfigs (key 32), versions 1-4.
//
// Topic resources list every topic config Sluice takes (or those named in
// ConfigNames), each with the value in force and its source: the topic's
// own value (DYNAMIC_TOPIC_CONFIG), this broker's override of the default
// from its configuration (STATIC_BROKER_CONFIG), or Kafka's default
// (DEFAULT_CONFIG). Topic configs are not read-only: AlterConfigs and
// IncrementalAlterConfigs change them. With IncludeSynonyms each config
// also lists where its value could come from, most specific first, under
// the broker-level names (log.retention.ms for retention.ms), as Kafka
// does. An invalid topic name is INVALID_TOPIC_EXCEPTION, an unknown topic
// UNKNOWN_TOPIC_OR_PARTITION.
//
// Broker resources describe this broker's settings (node.id,
// advertised.listeners, num.partitions, the log.* defaults of topic
// configs, ...), all read-only: Sluice has no dynamic broker configs. An
// empty name means the cluster-wide dynamic defaults, of which there are
// none; another broker's id is INVALID_REQUEST, as from Kafka, because a
// client must ask that broker.
//
// Version notes: Kafka 4 serves v1 and up. v1 brought synonyms and sources;
// v3 config types and documentation; v4 is flexible.

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/controller"
	"sluice/core/metadata"
)

func init() {
	registerAPI(&api{key: 32, advertisedMin: 1, honouredMin: 1, max: 4, handle: (*Broker).handleDescribeConfigs})
}

// describedConfig is one config of a DescribeConfigs answer.
type describedConfig struct {
	name          string
	value         string
	source        kmsg.ConfigSource
	readOnly      bool
	sensitive     bool
	configType    kmsg.ConfigType
	documentation string
	synonyms      []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym
}

func (b *Broker) handleDescribeConfigs(x *exchange) {
	req := x.request.Body.(*kmsg.DescribeConfigsRequest)
	resp := req.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, r := range req.Resources {
		answer := kmsg.NewDescribeConfigsResponseResource()
		answer.ResourceType, answer.ResourceName = r.ResourceType, r.ResourceName
		var configs []describedConfig
		var refused *refusal
		switch r.ResourceType {
		case kmsg.ConfigResourceTypeTopic:
			configs, refused = b.describeTopicConfigs(r.ResourceName)
		case kmsg.ConfigResourceTypeBroker:
			configs, refused = b.describeBrokerConfigs(r.ResourceName)
		default:
			refused = refuse(kerr.InvalidRequest, "unexpected resource type %d", r.ResourceType)
		}
		if refused != nil {
			answer.ErrorCode, answer.ErrorMessage = refused.code.Code, &refused.message
			resp.Resources = append(resp.Resources, answer)
			continue
		}
		for _, config := range configs {
			// No names, null or an empty list, is every config, as in
			// Kafka (ConfigHelper).
			if len(r.ConfigNames) > 0 && !contains(r.ConfigNames, config.name) {
				continue
			}
			answer.Configs = append(answer.Configs, config.answer(req))
		}
		resp.Resources = append(resp.Resources, answer)
	}
	x.respond(resp)
}

// refusal is why a resource gets no configs: a Kafka error and a message.
type refusal struct {
	code    *kerr.Error
	message string
}

func refuse(code *kerr.Error, format string, args ...any) *refusal {
	return &refusal{code: code, message: fmt.Sprintf(format, args...)}
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// answer renders one config for the request's version and options.
func (c describedConfig) answer(req *kmsg.DescribeConfigsRequest) kmsg.DescribeConfigsResponseResourceConfig {
	rc := kmsg.NewDescribeConfigsResponseResourceConfig()
	rc.Name = c.name
	if !c.sensitive {
		value := c.value
		rc.Value = &value
	}
	rc.ReadOnly = c.readOnly
	rc.IsDefault = c.source == kmsg.ConfigSourceDefaultConfig
	rc.Source = c.source
	rc.IsSensitive = c.sensitive
	rc.ConfigType = c.configType
	if req.IncludeSynonyms {
		rc.ConfigSynonyms = c.synonyms
	}
	if req.IncludeDocumentation && c.documentation != "" {
		documentation := c.documentation
		rc.Documentation = &documentation
	}
	return rc
}

func synonym(name, value string, source kmsg.ConfigSource) kmsg.DescribeConfigsResponseResourceConfigConfigSynonym {
	s := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
	s.Name, s.Value, s.Source = name, &value, source
	return s
}

// describeTopicConfigs lists a topic's configs from this broker's image.
func (b *Broker) describeTopicConfigs(topic string) ([]describedConfig, *refusal) {
	if err := metadata.ValidTopicName(topic); err != nil {
		return nil, refuse(kerr.InvalidTopicException, "%v", err)
	}
	if _, exists := b.image.Topics[topic]; !exists {
		return nil, refuse(kerr.UnknownTopicOrPartition, "topic %q does not exist", topic)
	}
	explicit := b.image.TopicConfigs(topic)
	var configs []describedConfig
	for _, v := range controller.EffectiveTopicConfigs(explicit, b.config.TopicDefaults) {
		d := v.Definition
		config := describedConfig{
			name: d.Name, value: v.Value, source: v.Source, sensitive: d.Sensitive,
			configType: controller.TopicConfigType(d.Name), documentation: d.Doc,
		}
		brokerName := brokerConfigName(d.Name)
		if value, set := explicit[d.Name]; set {
			config.synonyms = append(config.synonyms, synonym(d.Name, value, kmsg.ConfigSourceDynamicTopicConfig))
		}
		if value, set := b.config.TopicDefaults[d.Name]; set {
			config.synonyms = append(config.synonyms, synonym(brokerName, value, kmsg.ConfigSourceStaticBrokerConfig))
		}
		config.synonyms = append(config.synonyms, synonym(brokerName, d.Default, kmsg.ConfigSourceDefaultConfig))
		configs = append(configs, config)
	}
	return configs, nil
}

// describeBrokerConfigs lists this broker's settings, read-only.
func (b *Broker) describeBrokerConfigs(name string) ([]describedConfig, *refusal) {
	if name == "" {
		return nil, nil // no dynamic cluster-wide defaults
	}
	if id, err := strconv.ParseInt(name, 10, 32); err != nil || int32(id) != b.config.NodeID {
		return nil, refuse(kerr.InvalidRequest, "unexpected broker id, expected %d or empty string, but received %q", b.config.NodeID, name)
	}
	c := b.config
	static := func(name, value string, t kmsg.ConfigType, documentation string) describedConfig {
		source := kmsg.ConfigSourceDefaultConfig
		if c.StaticSettings[name] || name == "node.id" || name == "advertised.listeners" || name == "broker.rack" {
			source = kmsg.ConfigSourceStaticBrokerConfig
		}
		return describedConfig{
			name: name, value: value, source: source, readOnly: true, configType: t,
			documentation: documentation,
			synonyms:      []kmsg.DescribeConfigsResponseResourceConfigConfigSynonym{synonym(name, value, source)},
		}
	}
	configs := []describedConfig{
		static("node.id", strconv.Itoa(int(c.NodeID)), kmsg.ConfigTypeInt, "This node's id."),
		static("advertised.listeners", fmt.Sprintf("PLAINTEXT://%s:%d", c.AdvertisedHost, c.AdvertisedPort), kmsg.ConfigTypeString,
			"The address clients are told to connect to."),
		static("auto.create.topics.enable", strconv.FormatBool(c.AutoCreateTopics), kmsg.ConfigTypeBoolean,
			"Create a topic when a Metadata request names an unknown one."),
		static("num.partitions", strconv.Itoa(int(c.DefaultPartitions)), kmsg.ConfigTypeInt,
			"The default number of partitions of a new topic."),
		static("default.replication.factor", strconv.Itoa(int(c.DefaultReplicationFactor)), kmsg.ConfigTypeInt,
			"The default replication factor of a new topic."),
		static("log.retention.check.interval.ms", strconv.FormatInt(c.RetentionCheckInterval.Milliseconds(), 10), kmsg.ConfigTypeLong,
			"How often retention runs, in milliseconds."),
		static("producer.id.expiration.ms", strconv.FormatInt(c.ProducerIDExpiration.Milliseconds(), 10), kmsg.ConfigTypeInt,
			"How long an idle idempotent producer's state is kept, in milliseconds."),
	}
	if c.Rack != "" {
		configs = append(configs, static("broker.rack", c.Rack, kmsg.ConfigTypeString, "This broker's rack."))
	}
	for _, v := range controller.EffectiveTopicConfigs(nil, c.TopicDefaults) {
		d := v.Definition
		if _, has := metadata.ServerDefaultName(d.Name); !has {
			continue // no broker setting (remote.storage.enable)
		}
		config := describedConfig{
			name: brokerConfigName(d.Name), value: v.Value, source: v.Source, readOnly: true, sensitive: d.Sensitive,
			configType: controller.TopicConfigType(d.Name), documentation: "The default of topic config " + d.Name + ". " + d.Doc,
		}
		if v.Source == kmsg.ConfigSourceStaticBrokerConfig {
			config.synonyms = append(config.synonyms, synonym(config.name, v.Value, kmsg.ConfigSourceStaticBrokerConfig))
		}
		config.synonyms = append(config.synonyms, synonym(config.name, d.Default, kmsg.ConfigSourceDefaultConfig))
		configs = append(configs, config)
	}
	sort.Slice(configs, func(i, j int) bool { return configs[i].name < configs[j].name })
	return configs, nil
}

// brokerConfigName is the broker-level name of a topic config's default
// (metadata.ServerDefaultName), or the topic config's own name where the
// broker has none.
func brokerConfigName(topicConfig string) string {
	if name, ok := metadata.ServerDefaultName(topicConfig); ok {
		return name
	}
	return topicConfig
}
