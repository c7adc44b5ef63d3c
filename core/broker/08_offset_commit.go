package broker

// OffsetCommit (key 8), versions 2-8.
//
// Handed to the group coordinator (core/group, offset_commit.go), which
// answers once the commit's records are committed in __consumer_offsets
// (acks=all: durable before acknowledged), or REQUEST_TIMED_OUT after
// offsets.commit.timeout.ms. Partitions the cluster does not have are
// refused with UNKNOWN_TOPIC_OR_PARTITION.
//
// Version notes: Kafka 4 serves v2 and up. v2-v4 carry a retention time,
// which, unless -1, sets when the offsets expire in place of
// offsets.retention.minutes (Kafka still honours it); v3 adds throttling;
// v6 the leader epoch of each offset (KIP-320); v7 group.instance.id; v8
// is flexible.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(&api{key: 8, advertisedMin: 2, honouredMin: 2, max: 8, handle: (*Broker).handleOffsetCommit})
}

func (b *Broker) handleOffsetCommit(x *exchange) {
	req := x.request.Body.(*kmsg.OffsetCommitRequest)
	b.groups.coordinator.OffsetCommit(req, x)
}
