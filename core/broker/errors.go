package broker

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"sluice/core/replica"
)

// errorCode is the Kafka error code to answer for err: its own code when it
// is a Kafka error, UNKNOWN_SERVER_ERROR otherwise (and that is a bug worth
// a log line where it happens).
func errorCode(err error) int16 {
	if err == nil {
		return 0
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	return kerr.UnknownServerError.Code
}

// errorForCode is kerr.ErrorForCode, which looks every code up in a map,
// without the lookup for 0 (nil): a fetch answer carries a code for every
// partition, nearly always 0.
func errorForCode(code int16) error {
	if code == 0 {
		return nil
	}
	return kerr.ErrorForCode(code)
}

// leaderPartition finds a partition this node leads, or says why not:
// UNKNOWN_TOPIC_OR_PARTITION when the metadata has no such partition,
// NOT_LEADER_OR_FOLLOWER when another node leads it (or none does yet).
func (b *Broker) leaderPartition(key partitionKey) (*replica.Partition, error) {
	if _, exists := b.image.Partition(key.topic, key.partition); !exists {
		return nil, kerr.UnknownTopicOrPartition
	}
	p, open := b.partitions[key]
	if !open || !p.IsLeader() {
		return nil, kerr.NotLeaderForPartition
	}
	return p, nil
}
