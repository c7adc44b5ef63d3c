package controller

import (
	"maps"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/metadata"
)

// configAlteration is one resource of an AlterConfigs or
// IncrementalAlterConfigs request, and its outcome.
type configAlteration struct {
	resourceType kmsg.ConfigResourceType
	resourceName string
	configNames  []string // the names the request changes, in its order
	// clearsThrottlesOnly is set when every operation deletes a
	// replication throttle (see replicationThrottles).
	clearsThrottlesOnly bool
	failure             *failure
}

// alterTopicConfigs computes a topic's new explicit configs from its
// current ones (a copy it may change), or refuses.
type alterTopicConfigs func(index int, current map[string]string) (map[string]string, *failure)

// planConfigAlterations judges every resource of a config change request
// and returns the records of those that pass (none with validateOnly).
// The rules common to both APIs:
//
//   - a resource given twice: INVALID_REQUEST for each;
//   - a config name given twice for one resource: INVALID_REQUEST;
//   - a topic that does not exist: UNKNOWN_TOPIC_OR_PARTITION;
//   - a broker resource (type 4) changing anything: INVALID_REQUEST. Kafka
//     lets some broker configs change at run time (dynamic broker
//     configs); all of Sluice's are static, and Kafka answers exactly this
//     for a config that is read-only. Changing nothing is accepted;
//   - any other resource type: INVALID_REQUEST.
//
// alter applies the API's own rules to each topic.
func (c *Controller) planConfigAlterations(resources []*configAlteration, validateOnly bool, alter alterTopicConfigs) []metadata.Record {
	type key struct {
		resourceType kmsg.ConfigResourceType
		name         string
	}
	occurrences := map[key]int{}
	for _, r := range resources {
		occurrences[key{r.resourceType, r.resourceName}]++
	}
	var records []metadata.Record
	for i, r := range resources {
		if occurrences[key{r.resourceType, r.resourceName}] > 1 {
			r.failure = fail(kerr.InvalidRequest, "resource %q of type %d is given more than once", r.resourceName, r.resourceType)
			continue
		}
		if duplicate, found := firstDuplicate(r.configNames); found {
			r.failure = fail(kerr.InvalidRequest, "config %s is given more than once for %q", duplicate, r.resourceName)
			continue
		}
		switch r.resourceType {
		case kmsg.ConfigResourceTypeTopic:
		case kmsg.ConfigResourceTypeBroker:
			if len(r.configNames) > 0 && !r.clearsThrottlesOnly {
				r.failure = fail(kerr.InvalidRequest, "cannot update these configs dynamically: %s (Sluice's broker configs are static: set them in the broker's configuration)",
					strings.Join(r.configNames, ", "))
			}
			continue
		default:
			r.failure = fail(kerr.InvalidRequest, "unexpected resource type %d", r.resourceType)
			continue
		}
		// The name first, as Kafka's controller judges it: the default
		// topic resource ("") is not one, a name no topic could have
		// is invalid, then the topic must exist.
		switch {
		case r.resourceName == "":
			r.failure = fail(kerr.InvalidRequest, "default topic resources are not allowed")
			continue
		case metadata.ValidTopicName(r.resourceName) != nil:
			r.failure = fail(kerr.InvalidTopicException, "%v", metadata.ValidTopicName(r.resourceName))
			continue
		}
		if _, exists := c.image.Topics[r.resourceName]; !exists {
			r.failure = fail(kerr.UnknownTopicOrPartition, "topic %q does not exist", r.resourceName)
			continue
		}
		current := c.image.TopicConfigs(r.resourceName)
		updated, f := alter(i, maps.Clone(current))
		if f != nil {
			r.failure = f
			continue
		}
		for _, name := range sortedKeys(updated) {
			value := updated[name]
			if f := checkTopicConfigValue(name, &value); f != nil {
				r.failure = f
				break
			}
		}
		if r.failure == nil {
			r.failure = checkTopicConfigCombination(updated, c.config.TopicDefaults)
		}
		if r.failure == nil && !validateOnly {
			records = append(records, configChangeRecords(topicResource(r.resourceName), current, updated)...)
			if effectiveTopicConfig(metadata.ConfigUncleanLeaderElection, updated, c.config.TopicDefaults) == "true" {
				records = append(records, c.electLeaderlessUncleanly(r.resourceName)...)
			}
		}
	}
	if len(records) > recordsPerOperationMax {
		tooBig := fail(kerr.InvalidRequest, "the request would write %d metadata records, more than %d; change fewer configs at once",
			len(records), recordsPerOperationMax)
		for _, r := range resources {
			if r.failure == nil {
				r.failure = tooBig
			}
		}
		records = nil
	}
	return records
}

// firstDuplicate finds the first name given twice.
func firstDuplicate(names []string) (string, bool) {
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			return name, true
		}
		seen[name] = true
	}
	return "", false
}

// outcome is the answer for one resource: its own
// refusal, else the commit's.
func (r *configAlteration) outcome(commit *failure) *failure {
	if r.failure != nil {
		return r.failure
	}
	return commit
}
