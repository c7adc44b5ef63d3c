package controller

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

// IncrementalAlterConfigs answers IncrementalAlterConfigs (versions 0-1):
// each operation changes one config of a topic, the others stay:
//
//   - SET gives it a value (a null value is INVALID_REQUEST);
//   - DELETE removes the topic's own value, so the default applies again
//     (deleting a config the topic does not set changes nothing);
//   - APPEND adds comma-separated items missing from a list config's value
//     in force, SUBTRACT removes items from it. Only list configs
//     (cleanup.policy) take them; on any other, INVALID_CONFIG.
//
// Besides the rules of planConfigAlterations, an unknown config or an
// invalid resulting value is INVALID_CONFIG and an unknown operation
// INVALID_REQUEST. Only what changes is written.
//
// Sluice does not throttle replication, so Kafka's throttle configs
// (replicationThrottles) cannot be set; deleting them, on a topic or a
// broker, succeeds and changes nothing, as kafka-reassign-partitions.sh
// --verify and --cancel clear them after every reassignment.
func (c *Controller) IncrementalAlterConfigs(req *kmsg.IncrementalAlterConfigsRequest, done func(*kmsg.IncrementalAlterConfigsResponse)) {
	resources := make([]*configAlteration, len(req.Resources))
	for i, r := range req.Resources {
		resources[i] = &configAlteration{resourceType: r.ResourceType, resourceName: r.ResourceName, clearsThrottlesOnly: len(r.Configs) > 0}
		for _, config := range r.Configs {
			resources[i].configNames = append(resources[i].configNames, config.Name)
			if config.Op != kmsg.IncrementalAlterConfigOpDelete || !slices.Contains(replicationThrottles, config.Name) {
				resources[i].clearsThrottlesOnly = false
			}
		}
	}
	answer := func(commit *failure) {
		resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
		for _, r := range resources {
			f := r.outcome(commit)
			answer := kmsg.NewIncrementalAlterConfigsResponseResource()
			answer.ResourceType, answer.ResourceName = r.resourceType, r.resourceName
			answer.ErrorCode, answer.ErrorMessage = f.errorCode(), f.messagePointer()
			resp.Resources = append(resp.Resources, answer)
		}
		done(resp)
	}
	c.submitAdmin(func() ([]metadata.Record, func(*failure)) {
		records := c.planConfigAlterations(resources, req.ValidateOnly, func(i int, configs map[string]string) (map[string]string, *failure) {
			if configs == nil {
				configs = map[string]string{}
			}
			for _, op := range req.Resources[i].Configs {
				if f := c.applyConfigOperation(configs, op); f != nil {
					return nil, f
				}
			}
			return configs, nil
		})
		return records, answer
	}, func(f *failure) {
		for _, r := range resources {
			r.failure = f
		}
		answer(nil)
	})
}

// replicationThrottles are Kafka's replication throttle configs: the
// leader's and follower's throttled replicas of a topic, and a broker's
// throttled rates.
var replicationThrottles = []string{
	"leader.replication.throttled.replicas", "follower.replication.throttled.replicas",
	"leader.replication.throttled.rate", "follower.replication.throttled.rate",
	"replica.alter.log.dirs.io.max.bytes.per.second",
}

// applyConfigOperation applies one operation to a topic's explicit configs.
// Values are validated afterwards, once all operations have applied.
func (c *Controller) applyConfigOperation(configs map[string]string, op kmsg.IncrementalAlterConfigsRequestResourceConfig) *failure {
	if slices.Contains(replicationThrottles, op.Name) {
		if op.Op == kmsg.IncrementalAlterConfigOpDelete {
			return nil // never set, so already gone
		}
		return fail(kerr.InvalidConfig, "%s: Sluice does not throttle replication", op.Name)
	}
	if _, known := metadata.LookupTopicConfig(op.Name); !known {
		if op.Op == kmsg.IncrementalAlterConfigOpDelete {
			// Never set, so already gone: Kafka deletes a key no topic
			// holds without looking at its name, and tools clear
			// configs Sluice does not have (segment.jitter.ms) so.
			return nil
		}
		return fail(kerr.InvalidConfig, "unknown topic config name: %s", op.Name)
	}
	switch op.Op {
	case kmsg.IncrementalAlterConfigOpSet:
		if op.Value == nil {
			return fail(kerr.InvalidRequest, "null value not supported for topic config %s", op.Name)
		}
		configs[op.Name] = metadata.NormalizeTopicConfigValue(op.Name, *op.Value)
	case kmsg.IncrementalAlterConfigOpDelete:
		delete(configs, op.Name)
	case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
		if TopicConfigType(op.Name) != kmsg.ConfigTypeList {
			return fail(kerr.InvalidConfig, "config value %s is not allowed for config %s, which is not a list",
				strings.ToLower(op.Op.String()), op.Name)
		}
		if op.Value == nil {
			return fail(kerr.InvalidRequest, "null value not supported for topic config %s", op.Name)
		}
		items := listItems(effectiveTopicConfig(op.Name, configs, c.config.TopicDefaults))
		for _, item := range listItems(*op.Value) {
			present := slices.Contains(items, item)
			if op.Op == kmsg.IncrementalAlterConfigOpAppend && !present {
				items = append(items, item)
			}
			if op.Op == kmsg.IncrementalAlterConfigOpSubtract && present {
				items = slices.DeleteFunc(items, func(existing string) bool { return existing == item })
			}
		}
		configs[op.Name] = strings.Join(items, ",")
	default:
		return fail(kerr.InvalidRequest, "unknown config operation %d for %s", op.Op, op.Name)
	}
	return nil
}

// listItems splits a list config's value into its items.
func listItems(value string) []string {
	var items []string
	for _, item := range strings.Split(value, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}
