package quorum

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"sluice/core/batch"
)

// Control records are batches with the control attribute set, whose records
// carry a ControlRecordKey (version, type) as key. Kafka's control record
// types that the metadata log uses (ControlRecordType.java):
const (
	controlTypeLeaderChange   kmsg.ControlRecordKeyType = 2 // kmsg's older name: QuorumReassignment
	controlTypeSnapshotHeader kmsg.ControlRecordKeyType = 3
	controlTypeSnapshotFooter kmsg.ControlRecordKeyType = 4
)

// controlBatch builds a control batch of one record with the given type and
// value. Its offset and epoch are stamped when it is appended.
func controlBatch(kind kmsg.ControlRecordKeyType, value []byte, timestamp int64, epoch int32) []byte {
	key := kmsg.ControlRecordKey{Version: 0, Type: kind}
	return batch.Build(batch.Spec{
		LeaderEpoch:   epoch,
		Attributes:    batch.Control,
		BaseTimestamp: timestamp,
		ProducerID:    batch.NoProducerID,
		Records:       []batch.Record{{Key: key.AppendTo(nil), Value: value}},
	})
}

// leaderChangeBatch is the control batch a new leader appends first in its
// epoch (KIP-595's LeaderChangeMessage): who leads, the voters, and who
// voted for it. Committing it commits everything before it (Raft §5.4.2).
func leaderChangeBatch(leaderID int32, voters, granted []int32, timestamp int64) []byte {
	message := kmsg.NewLeaderChangeMessage()
	message.LeaderID = leaderID
	for _, id := range voters {
		v := kmsg.NewLeaderChangeMessageVoter()
		v.VoterID = id
		message.Voters = append(message.Voters, v)
	}
	for _, id := range granted {
		v := kmsg.NewLeaderChangeMessageVoter()
		v.VoterID = id
		message.GrantingVoters = append(message.GrantingVoters, v)
	}
	return controlBatch(controlTypeLeaderChange, message.AppendTo(nil), timestamp, 0)
}
