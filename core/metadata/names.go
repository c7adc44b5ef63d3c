package metadata

import "errors"

// topicNameBytesMax is Kafka's limit: a partition directory is named
// "<topic>-<partition>", and 249 keeps it within a 255-byte file name.
const topicNameBytesMax = 249

// ValidTopicName applies Kafka's rules for topic names: 1 to 249 characters
// of ASCII letters, digits, '.', '_' and '-', and neither "." nor "..".
func ValidTopicName(name string) error {
	switch {
	case name == "":
		return errors.New("topic name is empty")
	case name == "." || name == "..":
		return errors.New(`topic name cannot be "." or ".."`)
	case len(name) > topicNameBytesMax:
		return errors.New("topic name is longer than 249 characters")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return errors.New("topic name may contain only ASCII letters, digits, '.', '_' and '-'")
		}
	}
	return nil
}

// Internal topics.
const (
	ConsumerOffsetsTopic = "__consumer_offsets"
)

// ClusterMetadataTopic is the metadata log's name, which no user topic may
// take.
const ClusterMetadataTopic = "__cluster_metadata"

// IsInternalTopic reports a topic Sluice uses for its own state: that name
// exactly, as Kafka's Topic.isInternal names its own (a user topic whose
// name only starts like it, __cluster_metadata_audit, is the user's).
func IsInternalTopic(name string) bool {
	return name == ConsumerOffsetsTopic || name == ClusterMetadataTopic
}
