package controller

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/core/metadata"
)

// checkTopicConfigValue validates one topic config a request sets. Kafka
// refuses names it does not know (a typo would otherwise be silently
// ignored) and values its definition rejects, both with INVALID_CONFIG; a
// null value where one is needed is a malformed request.
func checkTopicConfigValue(name string, value *string) *failure {
	definition, known := metadata.LookupTopicConfig(name)
	if !known {
		return fail(kerr.InvalidConfig, "unknown topic config name: %s", name)
	}
	if value == nil {
		return fail(kerr.InvalidRequest, "null value not supported for topic config %s", name)
	}
	if err := definition.Validate(*value); err != nil {
		return fail(kerr.InvalidConfig, "%v", err)
	}
	return nil
}

// normalizedTopicConfigValue is a given topic config value as it is
// checked and stored: normalized as Kafka parses it, then checked
// (checkTopicConfigValue; a null value is refused as a malformed request).
func normalizedTopicConfigValue(name string, value *string) (string, *failure) {
	if value == nil {
		return "", checkTopicConfigValue(name, nil)
	}
	normalized := metadata.NormalizeTopicConfigValue(name, *value)
	return normalized, checkTopicConfigValue(name, &normalized)
}

// configChangeRecords returns the records that turn a resource's explicit
// configs from before into after: a ConfigRecord for each new or changed
// value and one with a nil Value for each removed name, in name order.
// Unchanged values write nothing, so repeating a change is free.
func configChangeRecords(resource metadata.ConfigResource, before, after map[string]string) []metadata.Record {
	var records []metadata.Record
	for _, name := range sortedKeys(before) {
		if _, kept := after[name]; !kept {
			records = append(records, metadata.Record{Config: &metadata.ConfigRecord{
				ResourceType: resource.Type, ResourceName: resource.Name, Name: name, Value: nil,
			}})
		}
	}
	for _, name := range sortedKeys(after) {
		value := after[name]
		if old, had := before[name]; had && old == value {
			continue
		}
		records = append(records, metadata.Record{Config: &metadata.ConfigRecord{
			ResourceType: resource.Type, ResourceName: resource.Name, Name: name, Value: &value,
		}})
	}
	return records
}
