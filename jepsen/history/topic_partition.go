package history

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// TopicPartition names one partition of one topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String is Kafka's usual "topic-3".
func (tp TopicPartition) String() string {
	return tp.Topic + "-" + strconv.FormatInt(int64(tp.Partition), 10)
}

// Compare orders by topic, then partition number (so topic-2 sorts before
// topic-10, which string order would not do).
func (tp TopicPartition) Compare(other TopicPartition) int {
	if c := strings.Compare(tp.Topic, other.Topic); c != 0 {
		return c
	}
	return cmp.Compare(tp.Partition, other.Partition)
}

// Less reports whether tp sorts before other.
func (tp TopicPartition) Less(other TopicPartition) bool { return tp.Compare(other) < 0 }

// MarshalText writes "topic-3", so JSON stays short and readable.
func (tp TopicPartition) MarshalText() ([]byte, error) {
	if tp.Topic == "" || tp.Partition < 0 {
		return nil, fmt.Errorf("history: cannot encode partition %q: empty topic or negative partition", tp.String())
	}
	return []byte(tp.String()), nil
}

// UnmarshalText reads "topic-3". The partition number follows the last
// dash: Kafka topic names may contain dashes, never after the number.
func (tp *TopicPartition) UnmarshalText(text []byte) error {
	parsed, err := ParseTopicPartition(string(text))
	if err != nil {
		return err
	}
	*tp = parsed
	return nil
}

// ParseTopicPartition reads the "topic-3" form String writes.
func ParseTopicPartition(text string) (TopicPartition, error) {
	dash := strings.LastIndexByte(text, '-')
	if dash <= 0 || dash == len(text)-1 {
		return TopicPartition{}, fmt.Errorf("history: partition %q is not of the form topic-N", text)
	}
	digits := text[dash+1:]
	number, err := strconv.ParseInt(digits, 10, 32)
	if err != nil || strings.TrimLeft(digits, "0123456789") != "" {
		return TopicPartition{}, fmt.Errorf("history: partition %q: %q is not a partition number", text, digits)
	}
	return TopicPartition{Topic: text[:dash], Partition: int32(number)}, nil
}
