package controller

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"pgregory.net/rapid"

	"sluice/core/metadata"
)

// modelTopic is all the model knows of a topic.
type modelTopic struct {
	partitions int
	configs    map[string]string
}

// configModel is a deliberately dumb model of the controller: a map of
// topic name to partition count and explicit configs, with the admin
// rules written out one by one. Two brokers are registered, so a
// replication factor of 3 cannot be met.
type configModel struct {
	topics map[string]*modelTopic
}

// collides reports whether name differs from an existing topic only by
// '.' against '_'.
func (m *configModel) collides(name string) bool {
	if !strings.ContainsAny(name, "._") {
		return false
	}
	for other := range m.topics { // order-independent: any match will do
		if other != name && strings.ReplaceAll(other, ".", "_") == strings.ReplaceAll(name, ".", "_") {
			return true
		}
	}
	return false
}

var (
	modelNames     = []string{"a", "b", "a.b", "a_b", "__consumer_offsets"}
	retentionDraws = []string{"1000", "60000", "-5", "forever"}
)

func TestControllerAgreesWithModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		tc := newTestController(t, Config{}, 1, 2)
		m := &configModel{topics: map[string]*modelTopic{}}

		rt.Repeat(map[string]func(*rapid.T){
			"create": func(rt *rapid.T) {
				name := rapid.SampledFrom(modelNames).Draw(rt, "name")
				partitions := rapid.SampledFrom([]int32{-1, 0, 1, 2, 3}).Draw(rt, "partitions")
				replicationFactor := rapid.SampledFrom([]int16{-1, 0, 1, 2, 3}).Draw(rt, "replicationFactor")
				var configs []string
				if rapid.Bool().Draw(rt, "withRetention") {
					configs = append(configs, metadata.ConfigRetentionMs, rapid.SampledFrom(retentionDraws).Draw(rt, "retention"))
				}
				want := (*kerr.Error)(nil)
				switch {
				case m.topics[name] != nil:
					want = kerr.TopicAlreadyExists
				case m.collides(name):
					want = kerr.InvalidTopicException
				case len(configs) > 0 && (configs[1] == "-5" || configs[1] == "forever"):
					want = kerr.InvalidConfig
				case replicationFactor == 0:
					want = kerr.InvalidReplicationFactor
				case partitions == 0:
					want = kerr.InvalidPartitions
				case replicationFactor == 3:
					want = kerr.InvalidReplicationFactor
				}
				resp := tc.createTopics(false, topicRequest(name, partitions, replicationFactor, configs...))
				if got := code(resp.Topics[0].ErrorCode); got != want {
					rt.Fatalf("create %q %d x %d %v: got %v, want %v", name, partitions, replicationFactor, configs, got, want)
				}
				if want == nil {
					topic := &modelTopic{partitions: int(max(partitions, 1)), configs: map[string]string{}}
					if len(configs) > 0 {
						topic.configs[configs[0]] = configs[1]
					}
					m.topics[name] = topic
				}
			},
			"delete": func(rt *rapid.T) {
				name := rapid.SampledFrom(modelNames).Draw(rt, "name")
				want := (*kerr.Error)(nil)
				if m.topics[name] == nil {
					want = kerr.UnknownTopicOrPartition
				}
				resp := tc.deleteTopics(name)
				if got := code(resp.Topics[0].ErrorCode); got != want {
					rt.Fatalf("delete %q: got %v, want %v", name, got, want)
				}
				delete(m.topics, name)
			},
			"createPartitions": func(rt *rapid.T) {
				name := rapid.SampledFrom(modelNames).Draw(rt, "name")
				count := rapid.Int32Range(0, 6).Draw(rt, "count")
				want := (*kerr.Error)(nil)
				switch topic := m.topics[name]; {
				case topic == nil:
					want = kerr.UnknownTopicOrPartition
				case int(count) <= topic.partitions:
					want = kerr.InvalidPartitions
				}
				resp := tc.createPartitions(false, growTo(name, count))
				if got := code(resp.Topics[0].ErrorCode); got != want {
					rt.Fatalf("grow %q to %d: got %v, want %v", name, count, got, want)
				}
				if want == nil {
					m.topics[name].partitions = int(count)
				}
			},
			"incrementalAlter": func(rt *rapid.T) {
				name := rapid.SampledFrom(modelNames).Draw(rt, "name")
				var ops []any
				var apply func(configs map[string]string) bool
				switch rapid.IntRange(0, 3).Draw(rt, "op") {
				case 0:
					value := rapid.SampledFrom(retentionDraws).Draw(rt, "retention")
					ops = []any{metadata.ConfigRetentionMs, set, value}
					apply = func(c map[string]string) bool {
						c[metadata.ConfigRetentionMs] = value
						return value != "-5" && value != "forever"
					}
				case 1:
					ops = []any{metadata.ConfigRetentionMs, remove, "<nil>"}
					apply = func(c map[string]string) bool { delete(c, metadata.ConfigRetentionMs); return true }
				case 2:
					ops = []any{metadata.ConfigCleanupPolicy, appendTo, "compact"}
					apply = func(c map[string]string) bool {
						policy, set := c[metadata.ConfigCleanupPolicy]
						switch {
						case !set:
							c[metadata.ConfigCleanupPolicy] = "delete,compact"
						case !strings.Contains(policy, "compact"):
							c[metadata.ConfigCleanupPolicy] = policy + ",compact"
						}
						return true
					}
				case 3:
					ops = []any{metadata.ConfigCleanupPolicy, subtract, "delete"}
					apply = func(c map[string]string) bool {
						policy, set := c[metadata.ConfigCleanupPolicy]
						if !set {
							policy = "delete"
						}
						items := slices.DeleteFunc(strings.Split(policy, ","), func(s string) bool { return s == "delete" })
						c[metadata.ConfigCleanupPolicy] = strings.Join(items, ",")
						return len(items) > 0
					}
				}
				want := (*kerr.Error)(nil)
				var updated map[string]string
				if topic := m.topics[name]; topic == nil {
					want = kerr.UnknownTopicOrPartition
				} else if updated = maps.Clone(topic.configs); !apply(updated) {
					want = kerr.InvalidConfig
				}
				resp := tc.incrementalAlter(false, incremental(topic, name, ops...))
				if got := code(resp.Resources[0].ErrorCode); got != want {
					rt.Fatalf("alter %q %v: got %v, want %v", name, ops, got, want)
				}
				if want == nil {
					m.topics[name].configs = updated
				}
			},
			"legacyAlter": func(rt *rapid.T) {
				name := rapid.SampledFrom(modelNames).Draw(rt, "name")
				var pairs []string
				if rapid.Bool().Draw(rt, "withSegment") {
					pairs = append(pairs, metadata.ConfigSegmentMs, "60000")
				}
				want := (*kerr.Error)(nil)
				if m.topics[name] == nil {
					want = kerr.UnknownTopicOrPartition
				}
				resp := tc.alter(false, legacy(topic, name, pairs...))
				if got := code(resp.Resources[0].ErrorCode); got != want {
					rt.Fatalf("legacy alter %q %v: got %v, want %v", name, pairs, got, want)
				}
				if want == nil {
					m.topics[name].configs = map[string]string{}
					if len(pairs) > 0 {
						m.topics[name].configs[pairs[0]] = pairs[1]
					}
				}
			},
			"": func(rt *rapid.T) { m.check(rt, tc) },
		})
	})
}

// check compares the image with the model and checks the invariants of
// every partition.
func (m *configModel) check(rt *rapid.T, tc *testController) {
	image := tc.c.Image()
	var names []string
	for name := range m.topics {
		names = append(names, name)
	}
	slices.Sort(names)
	if got := image.TopicNames(); !slices.Equal(got, names) {
		rt.Fatalf("topics %v, model %v", got, names)
	}
	for _, name := range names {
		topic := image.Topics[name]
		if len(topic.Partitions) != m.topics[name].partitions {
			rt.Fatalf("%s has %d partitions, model %d", name, len(topic.Partitions), m.topics[name].partitions)
		}
		configs := image.TopicConfigs(name)
		if !maps.Equal(configs, m.topics[name].configs) && !(len(configs) == 0 && len(m.topics[name].configs) == 0) {
			rt.Fatalf("%s has configs %v, model %v", name, configs, m.topics[name].configs)
		}
		for i, p := range topic.Partitions {
			seen := map[int32]bool{}
			for _, r := range p.Replicas {
				if seen[r] || image.Brokers[r] == nil {
					rt.Fatalf("%s-%d has replicas %v", name, i, p.Replicas)
				}
				seen[r] = true
			}
			if p.Index != int32(i) || p.Leader != p.Replicas[0] || !slices.Equal(p.ISR, p.Replicas) {
				rt.Fatalf("%s-%d is %+v", name, i, p)
			}
		}
	}
	if len(image.Configs) > len(names) {
		rt.Fatalf("configs of %d resources for %d topics", len(image.Configs), len(names))
	}
}
