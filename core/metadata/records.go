package metadata

import (
	"encoding/json"
	"fmt"
)

// TopicID is a topic's 16-byte UUID, as Kafka's Metadata v10+ carries it.
type TopicID [16]byte

// String formats the id as Kafka's tools do: URL-safe base64 without padding
// would match Kafka exactly, but hex is easier to read in traces.
func (id TopicID) String() string { return fmt.Sprintf("%x", id[:]) }

// IsZero reports an unset id.
func (id TopicID) IsZero() bool { return id == TopicID{} }

// Record is one metadata change. Exactly one field is set.
type Record struct {
	RegisterBroker  *RegisterBrokerRecord  `json:"register_broker,omitempty"`
	BrokerFence     *BrokerFenceRecord     `json:"broker_fence,omitempty"`
	BrokerCaughtUp  *BrokerCaughtUpRecord  `json:"broker_caught_up,omitempty"`
	Topic           *TopicRecord           `json:"topic,omitempty"`
	Partition       *PartitionRecord       `json:"partition,omitempty"`
	PartitionChange *PartitionChangeRecord `json:"partition_change,omitempty"`
	RemoveTopic     *RemoveTopicRecord     `json:"remove_topic,omitempty"`
	Config          *ConfigRecord          `json:"config,omitempty"`
	ProducerIDs     *ProducerIDsRecord     `json:"producer_ids,omitempty"`
	NoOp            *NoOpRecord            `json:"no_op,omitempty"`
}

// RegisterBrokerRecord announces a broker, or a restart of one: a new
// incarnation gets a new broker epoch (KIP-631), which fences requests from
// the old process.
type RegisterBrokerRecord struct {
	BrokerID      int32    `json:"broker_id"`
	IncarnationID [16]byte `json:"incarnation_id"`
	BrokerEpoch   int64    `json:"broker_epoch"`
	Host          string   `json:"host"`
	Port          int32    `json:"port"`
	Rack          string   `json:"rack,omitempty"`
}

// BrokerFenceRecord fences a broker that stopped heartbeating, or unfences
// one that caught up.
type BrokerFenceRecord struct {
	BrokerID    int32 `json:"broker_id"`
	BrokerEpoch int64 `json:"broker_epoch"`
	Fenced      bool  `json:"fenced"`
}

// BrokerCaughtUpRecord says an unfenced broker has applied every record
// that took a leadership from it (its heartbeat showed it, core/
// controller catch_up.go): it serves none of those partitions any more,
// so it is deposed from none (Partition.Deposed).
type BrokerCaughtUpRecord struct {
	BrokerID    int32 `json:"broker_id"`
	BrokerEpoch int64 `json:"broker_epoch"`
}

// TopicRecord creates a topic; its partitions follow as PartitionRecords.
type TopicRecord struct {
	Name string  `json:"name"`
	ID   TopicID `json:"id"`
}

// PartitionRecord creates a partition with its replica assignment.
type PartitionRecord struct {
	TopicID        TopicID `json:"topic_id"`
	Partition      int32   `json:"partition"`
	Replicas       []int32 `json:"replicas"`
	ISR            []int32 `json:"isr"`
	Leader         int32   `json:"leader"`
	LeaderEpoch    int32   `json:"leader_epoch"`
	PartitionEpoch int32   `json:"partition_epoch"`
	// UncleanEpoch is the leader epoch of the partition's latest unclean
	// election (see PartitionChangeRecord.Unclean), 0 if it never had
	// one: a snapshot carries it on.
	UncleanEpoch int32 `json:"unclean_epoch,omitempty"`
	// AddingReplicas and RemovingReplicas are a reassignment in progress
	// (see PartitionChangeRecord): a snapshot carries them on.
	AddingReplicas   []int32 `json:"adding_replicas,omitempty"`
	RemovingReplicas []int32 `json:"removing_replicas,omitempty"`
	// Deposed are the partition's former leaders not fenced since (see
	// Partition.Deposed): a snapshot carries them on.
	Deposed []int32 `json:"deposed,omitempty"`
}

// PartitionChangeRecord changes a partition's leader, ISR or replicas. Nil fields are
// unchanged. A Leader, even the one the partition has, bumps the leader
// epoch; any change bumps the partition epoch, which AlterPartition
// requests must name to be accepted.
type PartitionChangeRecord struct {
	TopicID   TopicID `json:"topic_id"`
	Partition int32   `json:"partition"`
	Leader    *int32  `json:"leader,omitempty"`
	ISR       []int32 `json:"isr,omitempty"`
	Replicas  []int32 `json:"replicas,omitempty"`
	// AddingReplicas and RemovingReplicas are the partition's
	// reassignment (KIP-455) as of this change, and travel with Replicas:
	// a record that sets Replicas sets them too, absent meaning none (no
	// reassignment, or it just completed or was cancelled); a record
	// without Replicas leaves them as they were. While a reassignment
	// runs, Replicas is the target followed by the replicas it removes,
	// so every replica that holds or will hold the data stays in it.
	AddingReplicas   []int32 `json:"adding_replicas,omitempty"`
	RemovingReplicas []int32 `json:"removing_replicas,omitempty"`
	// Unclean marks a new leader the controller chose outside the ISR
	// (unclean.leader.election.enable): it may lack records that were
	// committed, so a follower may have to cut below its high watermark
	// to follow it, now or long after the config was turned off again.
	// Kafka's KIP-704 records the same fact as LeaderRecoveryState.
	Unclean bool `json:"unclean,omitempty"`
}

// RemoveTopicRecord deletes a topic and its partitions.
type RemoveTopicRecord struct {
	TopicID TopicID `json:"topic_id"`
}

// ConfigRecord sets (Value non-nil) or removes a config of a resource: a
// topic (ResourceType 2) or a broker (4), as in Kafka's ConfigResource.
type ConfigRecord struct {
	ResourceType int8    `json:"resource_type"`
	ResourceName string  `json:"resource_name"`
	Name         string  `json:"name"`
	Value        *string `json:"value"`
}

// ProducerIDsRecord hands a broker a block of producer ids: everything from
// the previous NextProducerID up to this one belongs to BrokerID.
type ProducerIDsRecord struct {
	BrokerID       int32 `json:"broker_id"`
	BrokerEpoch    int64 `json:"broker_epoch"`
	NextProducerID int64 `json:"next_producer_id"`
}

// NoOpRecord changes nothing (KIP-835). A new active controller commits one
// before it acts, so that everything earlier leaders committed is in its
// image first: a record of its own term is committed only after every
// record before it.
type NoOpRecord struct{}

// Config resource types, from Kafka's DescribeConfigs.
const (
	ResourceTopic  int8 = 2
	ResourceBroker int8 = 4
)

// Encode turns a record into the bytes stored as a record value: JSON, as
// json.Marshal writes it. Records whose strings need no escaping (all of
// them, in practice) are written by appendEncoded (record_encoding.go),
// which writes the same bytes without reflection.
func (r Record) Encode() []byte {
	return r.AppendEncode(make([]byte, 0, encodedBytesGuess))
}

// AppendEncode appends Encode's bytes to b, for a caller that encodes many
// records into one buffer.
func (r Record) AppendEncode(b []byte) []byte {
	if encoded, ok := appendEncoded(b, r); ok {
		return encoded
	}
	j, err := json.Marshal(r)
	if err != nil {
		panic(fmt.Sprintf("metadata: cannot encode record %+v: %v", r, err))
	}
	return append(b, j...)
}

// encodedBytesGuess is room for most records' encoding in one allocation:
// a partition record, the longest common one, takes about 200 bytes.
const encodedBytesGuess = 256

// DecodeRecord reads a stored record. Bytes in the exact form Encode
// writes take a fast path (record_decoding.go); anything else, and every
// error, comes from encoding/json.
func DecodeRecord(b []byte) (Record, error) {
	if r, ok := decodeEncoded(b); ok {
		return r, nil
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("metadata: bad record: %w", err)
	}
	if r.count() != 1 {
		return r, fmt.Errorf("metadata: record sets %d kinds, want 1", r.count())
	}
	return r, nil
}

func (r Record) count() int {
	n := 0
	for _, set := range []bool{
		r.RegisterBroker != nil, r.BrokerFence != nil, r.BrokerCaughtUp != nil, r.Topic != nil, r.Partition != nil,
		r.PartitionChange != nil, r.RemoveTopic != nil, r.Config != nil, r.ProducerIDs != nil,
		r.NoOp != nil,
	} {
		if set {
			n++
		}
	}
	return n
}
