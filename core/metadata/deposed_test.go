package metadata

import (
	"slices"
	"testing"
)

// A leader replaced while unfenced stays deposed, across later changes and
// a snapshot, until its broker is fenced, registers again, or is found
// caught up; a fenced leader, or one leading again, is not deposed.
func TestDeposedLeadersAreRememberedUntilFenced(t *testing.T) {
	id := TopicID{4}
	leader := func(id int32) *int32 { return &id }
	img := NewImage()
	offset := int64(0)
	apply := func(r Record) {
		t.Helper()
		if err := img.Apply(offset, r); err != nil {
			t.Fatal(err)
		}
		offset++
	}
	deposed := func(want ...int32) {
		t.Helper()
		if got := img.Topics["t"].Partitions[0].Deposed; !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("after record %d: deposed %v, want %v", offset-1, got, want)
		}
	}
	for b := int32(1); b <= 3; b++ {
		apply(Record{RegisterBroker: &RegisterBrokerRecord{BrokerID: b, IncarnationID: [16]byte{byte(b)}, BrokerEpoch: int64(b)}})
		apply(Record{BrokerFence: &BrokerFenceRecord{BrokerID: b, BrokerEpoch: int64(b), Fenced: false}})
	}
	apply(Record{Topic: &TopicRecord{Name: "t", ID: id}})
	apply(Record{Partition: &PartitionRecord{TopicID: id, Partition: 0, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, Leader: 1}})
	deposed()
	apply(Record{PartitionChange: &PartitionChangeRecord{TopicID: id, Partition: 0, Leader: leader(2)}})
	deposed(1)
	apply(Record{PartitionChange: &PartitionChangeRecord{TopicID: id, Partition: 0, Leader: leader(3)}})
	deposed(1, 2)
	apply(Record{PartitionChange: &PartitionChangeRecord{TopicID: id, Partition: 0, Leader: leader(3), ISR: []int32{3, 2}}})
	deposed(1, 2) // the same leader: nobody more is deposed
	rebuilt, err := ImageFromRecords(img.Offset, img.Records())
	if err != nil {
		t.Fatal(err)
	}
	if got := rebuilt.Topics["t"].Partitions[0].Deposed; !slices.Equal(got, []int32{1, 2}) {
		t.Fatalf("the snapshot's image has deposed %v, want [1 2]", got)
	}
	apply(Record{PartitionChange: &PartitionChangeRecord{TopicID: id, Partition: 0, Leader: leader(1)}})
	deposed(2, 3) // 1 leads again
	apply(Record{BrokerCaughtUp: &BrokerCaughtUpRecord{BrokerID: 2, BrokerEpoch: 2}})
	deposed(3)
	apply(Record{PartitionChange: &PartitionChangeRecord{TopicID: id, Partition: 0, Leader: leader(2)}})
	deposed(3, 1)
	apply(Record{BrokerFence: &BrokerFenceRecord{BrokerID: 1, BrokerEpoch: 1, Fenced: true}})
	deposed(3)
	apply(Record{PartitionChange: &PartitionChangeRecord{TopicID: id, Partition: 0, Leader: leader(1)}})
	deposed(3, 2)
	apply(Record{BrokerCaughtUp: &BrokerCaughtUpRecord{BrokerID: 2, BrokerEpoch: 2}})
	deposed(3)
	apply(Record{RegisterBroker: &RegisterBrokerRecord{BrokerID: 3, IncarnationID: [16]byte{9}, BrokerEpoch: 30}})
	deposed()
	// Brokers 1 (fenced above) and 3 (a registration fences) hold no
	// lease: taking the leadership from them deposes nobody.
	apply(Record{PartitionChange: &PartitionChangeRecord{TopicID: id, Partition: 0, Leader: leader(3)}})
	deposed()
	apply(Record{PartitionChange: &PartitionChangeRecord{TopicID: id, Partition: 0, Leader: leader(-1)}})
	deposed()
}
