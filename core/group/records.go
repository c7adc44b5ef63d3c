package group

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
)

// The record formats of __consumer_offsets, as Kafka writes them, so that
// Kafka's own tools can read the topic. A key's first two bytes are its
// version, which says what the record is: 0 and 1 an offset commit
// (OffsetCommitKey: group, topic, partition), 2 a group's metadata
// (GroupMetadataKey: group). A null value is a tombstone: the offset or
// the group is gone, and compaction may drop everything before it.
const (
	offsetCommitKeyVersion  = 1
	groupMetadataKeyVersion = 2
	// offsetCommitValueVersion 3 carries the leader epoch (KIP-320) and no
	// expire timestamp (KIP-211); an offset with an expire timestamp of its
	// own (an OffsetCommit v2-v4's retention time) is written as version 1,
	// with no leader epoch, as Kafka writes it.
	offsetCommitValueVersion       = 3
	offsetCommitValueVersionExpire = 1
	// groupMetadataValueVersion 3 carries static members' instance ids
	// (KIP-345); 4 would only make it flexible.
	groupMetadataValueVersion = 3
)

// offsetRecord is the record of one committed offset; nil offset makes
// the tombstone that deletes it.
func offsetRecord(groupID string, tp topicPartition, offset *committedOffset) batch.Record {
	// The key and the value share one buffer of their size (key v1:
	// version, group, topic, partition; value v3: version, offset,
	// leader epoch, metadata, timestamp): appended to nil, each grew
	// several times, and every commit writes one per partition.
	size := offsetKeyBytes + len(groupID) + len(tp.topic)
	if offset != nil {
		size += offsetValueBytes + len(offset.metadata)
		if offset.expireTimestamp != 0 {
			size += offsetExpireBytes
		}
	}
	key := kmsg.NewOffsetCommitKey()
	key.Version = offsetCommitKeyVersion
	key.Group, key.Topic, key.Partition = groupID, tp.topic, tp.partition
	encodedKey := key.AppendTo(make([]byte, 0, size))
	record := batch.Record{Key: encodedKey[:len(encodedKey):len(encodedKey)]}
	if offset != nil {
		value := kmsg.NewOffsetCommitValue()
		value.Version = offsetCommitValueVersion
		value.Offset = offset.offset
		value.LeaderEpoch = offset.leaderEpoch
		value.Metadata = offset.metadata
		value.CommitTimestamp = offset.commitTimestamp
		if offset.expireTimestamp != 0 {
			value.Version = offsetCommitValueVersionExpire
			value.ExpireTimestamp = offset.expireTimestamp
		}
		record.Value = value.AppendTo(encodedKey[len(encodedKey):])
	}
	return record
}

// offsetKeyBytes and offsetValueBytes are an offset record's key and
// value sizes without their strings.
const (
	offsetKeyBytes    = 2 + 2 + 2 + 4
	offsetValueBytes  = 2 + 8 + 4 + 2 + 8
	offsetExpireBytes = 8
)

// groupRecord is the record of a group's current generation: its
// protocol, leader, and every member with its subscription (its metadata
// for the chosen protocol) and assignment.
func groupRecord(g *group, assignment map[string][]byte) batch.Record {
	key := kmsg.NewGroupMetadataKey()
	key.Version = groupMetadataKeyVersion
	key.Group = g.id
	value := kmsg.NewGroupMetadataValue()
	value.Version = groupMetadataValueVersion
	value.ProtocolType = g.protocolType
	value.Generation = g.generation
	if g.protocolName != "" {
		name := g.protocolName
		value.Protocol = &name
	}
	if g.leaderID != "" {
		leader := g.leaderID
		value.Leader = &leader
	}
	value.CurrentStateTimestamp = g.stateTimestamp
	for _, m := range g.members {
		stored := kmsg.NewGroupMetadataValueMember()
		stored.MemberID = m.id
		stored.InstanceID = m.instanceID
		stored.ClientID = m.clientID
		stored.ClientHost = m.clientHost
		stored.RebalanceTimeoutMillis = m.rebalanceTimeoutMs
		stored.SessionTimeoutMillis = m.sessionTimeoutMs
		stored.Subscription = m.metadata(g.protocolName)
		stored.Assignment = assignment[m.id]
		value.Members = append(value.Members, stored)
	}
	return batch.Record{Key: key.AppendTo(nil), Value: value.AppendTo(nil)}
}

// groupTombstone is the record that deletes a group's metadata.
func groupTombstone(groupID string) batch.Record {
	key := kmsg.NewGroupMetadataKey()
	key.Version = groupMetadataKeyVersion
	key.Group = groupID
	return batch.Record{Key: key.AppendTo(nil)}
}

// storedRecord is one decoded record of the offsets topic: an offset
// (isOffset) or a group's metadata. A nil offset or metadata is a
// tombstone.
type storedRecord struct {
	isOffset bool
	groupID  string
	tp       topicPartition
	offset   *committedOffset
	metadata *kmsg.GroupMetadataValue
}

// errUnknownRecord reports a key version this coordinator does not know,
// such as the records of Kafka's newer group protocol (KIP-848).
var errUnknownRecord = errors.New("group: unknown record key version")

// decodeRecord reads one record of the offsets topic.
func decodeRecord(r batch.Record) (storedRecord, error) {
	if len(r.Key) < 2 {
		return storedRecord{}, fmt.Errorf("group: record key of %d bytes has no version", len(r.Key))
	}
	switch version := int16(binary.BigEndian.Uint16(r.Key)); version {
	case 0, 1:
		var key kmsg.OffsetCommitKey
		if err := key.ReadFrom(r.Key); err != nil {
			return storedRecord{}, fmt.Errorf("group: offset commit key: %w", err)
		}
		decoded := storedRecord{isOffset: true, groupID: key.Group, tp: topicPartition{topic: key.Topic, partition: key.Partition}}
		if r.Value == nil {
			return decoded, nil
		}
		var value kmsg.OffsetCommitValue
		if err := value.ReadFrom(r.Value); err != nil {
			return storedRecord{}, fmt.Errorf("group: offset commit value of %s: %w", key.Group, err)
		}
		leaderEpoch := value.LeaderEpoch
		if value.Version < 3 {
			leaderEpoch = -1 // older values have none
		}
		decoded.offset = &committedOffset{
			offset: value.Offset, leaderEpoch: leaderEpoch,
			metadata: value.Metadata, commitTimestamp: value.CommitTimestamp,
		}
		if value.Version == offsetCommitValueVersionExpire && value.ExpireTimestamp > 0 {
			decoded.offset.expireTimestamp = value.ExpireTimestamp
		}
		return decoded, nil
	case 2:
		var key kmsg.GroupMetadataKey
		if err := key.ReadFrom(r.Key); err != nil {
			return storedRecord{}, fmt.Errorf("group: group metadata key: %w", err)
		}
		decoded := storedRecord{groupID: key.Group}
		if r.Value == nil {
			return decoded, nil
		}
		value := new(kmsg.GroupMetadataValue)
		if err := value.ReadFrom(r.Value); err != nil {
			return storedRecord{}, fmt.Errorf("group: group metadata value of %s: %w", key.Group, err)
		}
		decoded.metadata = value
		return decoded, nil
	default:
		return storedRecord{}, fmt.Errorf("%w %d", errUnknownRecord, version)
	}
}
