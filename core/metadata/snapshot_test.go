package metadata

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"pgregory.net/rapid"
)

// TestImageRecordsRebuildTheImage is the snapshot's contract: for any image
// built from a valid metadata log, replaying Records() gives an equal image
// at the same offset. The logs are random sequences of every record type.
func TestImageRecordsRebuildTheImage(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		img := randomImage(t)
		records := img.Records()
		rebuilt, err := ImageFromRecords(img.Offset, records)
		if err != nil {
			t.Fatalf("replaying the snapshot: %v", err)
		}
		requireEqualImages(t, img, rebuilt)
		// Twice is the same: the order does not depend on map order.
		if diff := cmp.Diff(records, img.Records()); diff != "" {
			t.Fatalf("Records() differs between calls:\n%s", diff)
		}
	})
}

func TestImageRecordsOfEmptyImage(t *testing.T) {
	img := NewImage()
	if records := img.Records(); len(records) != 0 {
		t.Fatalf("empty image gave %d records", len(records))
	}
	rebuilt, err := ImageFromRecords(-1, nil)
	if err != nil || rebuilt.Offset != -1 || len(rebuilt.Brokers) != 0 {
		t.Fatalf("rebuilt %+v, %v", rebuilt, err)
	}
}

func TestImageFromRecordsRefusesRecordsThatDoNotApply(t *testing.T) {
	_, err := ImageFromRecords(5, []Record{{Partition: &PartitionRecord{TopicID: TopicID{1}, Partition: 0, Replicas: []int32{1}}}})
	if err == nil {
		t.Fatal("a partition of an unknown topic was accepted")
	}
}

// requireEqualImages compares two images field by field. Partitions point
// back at their topic, which cmp would follow round in circles; the
// back-pointers are checked on their own.
func requireEqualImages(t interface {
	Fatalf(string, ...any)
}, want, got *Image) {
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Partition{}, "Topic"), cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("rebuilt image differs (-want +got):\n%s", diff)
	}
	for name, topic := range got.Topics {
		if got.TopicsByID[topic.ID] != topic {
			t.Fatalf("topic %q is not indexed by its id", name)
		}
		for _, p := range topic.Partitions {
			if p.Topic != topic {
				t.Fatalf("partition %d of %q points at another topic", p.Index, name)
			}
		}
	}
}

// randomImage applies a random valid metadata log to an empty image.
func randomImage(t *rapid.T) *Image {
	img := NewImage()
	offset := int64(0)
	apply := func(r Record) {
		if err := img.Apply(offset, r); err != nil {
			t.Fatalf("generated an invalid record %+v: %v", r, err)
		}
		offset++
	}
	brokerIDs := []int32{1, 2, 3, 4}
	steps := rapid.IntRange(0, 60).Draw(t, "steps")
	for range steps {
		switch rapid.IntRange(0, 8).Draw(t, "kind") {
		case 0: // (re-)register a broker
			id := rapid.SampledFrom(brokerIDs).Draw(t, "broker")
			epoch := offset + 1
			apply(Record{RegisterBroker: &RegisterBrokerRecord{
				BrokerID: id, IncarnationID: [16]byte{byte(offset)}, BrokerEpoch: epoch,
				Host: fmt.Sprintf("host-%d", id), Port: 9000 + id, Rack: rapid.SampledFrom([]string{"", "a"}).Draw(t, "rack"),
			}})
		case 1: // fence or unfence a registered broker
			ids := img.BrokerIDs()
			if len(ids) == 0 {
				continue
			}
			b := img.Brokers[rapid.SampledFrom(ids).Draw(t, "broker")]
			apply(Record{BrokerFence: &BrokerFenceRecord{BrokerID: b.ID, BrokerEpoch: b.Epoch, Fenced: rapid.Bool().Draw(t, "fenced")}})
		case 2: // a topic with partitions
			name := fmt.Sprintf("topic-%d", offset)
			id := TopicID{byte(offset), byte(offset >> 8), 7}
			apply(Record{Topic: &TopicRecord{Name: name, ID: id}})
			for p := range rapid.IntRange(1, 4).Draw(t, "partitions") {
				replicas := rapid.SliceOfNDistinct(rapid.SampledFrom(brokerIDs), 1, 3, rapid.ID[int32]).Draw(t, "replicas")
				apply(Record{Partition: &PartitionRecord{
					TopicID: id, Partition: int32(p), Replicas: replicas, ISR: replicas[:1], Leader: replicas[0],
				}})
			}
		case 3: // a partition change
			names := img.TopicNames()
			if len(names) == 0 {
				continue
			}
			topic := img.Topics[rapid.SampledFrom(names).Draw(t, "topic")]
			p := topic.Partitions[rapid.IntRange(0, len(topic.Partitions)-1).Draw(t, "partition")]
			change := &PartitionChangeRecord{TopicID: topic.ID, Partition: p.Index}
			if rapid.Bool().Draw(t, "new leader") {
				leader := rapid.SampledFrom(append([]int32{-1}, p.Replicas...)).Draw(t, "leader")
				change.Leader = &leader
				change.Unclean = leader >= 0 && leader != p.Leader && rapid.Bool().Draw(t, "unclean")
			}
			if rapid.Bool().Draw(t, "new isr") {
				change.ISR = p.Replicas[:rapid.IntRange(1, len(p.Replicas)).Draw(t, "isr size")]
			}
			if rapid.Bool().Draw(t, "reassign") {
				// A reassignment's state: the target, then the
				// replicas it removes, some of the target new.
				target := rapid.SliceOfNDistinct(rapid.SampledFrom(brokerIDs), 1, 3, rapid.ID[int32]).Draw(t, "target")
				change.Replicas = slices.Clone(target)
				for _, r := range p.Replicas {
					if !slices.Contains(target, r) {
						change.Replicas = append(change.Replicas, r)
						change.RemovingReplicas = append(change.RemovingReplicas, r)
					}
				}
				for _, r := range target {
					if !slices.Contains(p.Replicas, r) {
						change.AddingReplicas = append(change.AddingReplicas, r)
					}
				}
			}
			apply(Record{PartitionChange: change})
		case 4: // remove a topic
			names := img.TopicNames()
			if len(names) == 0 {
				continue
			}
			apply(Record{RemoveTopic: &RemoveTopicRecord{TopicID: img.Topics[rapid.SampledFrom(names).Draw(t, "topic")].ID}})
		case 5: // set or remove a topic config (of a topic that may not exist)
			name := rapid.SampledFrom(append(img.TopicNames(), "not-a-topic")).Draw(t, "resource")
			value := rapid.SampledFrom([]string{"1000", "2000"}).Draw(t, "value")
			config := &ConfigRecord{ResourceType: ResourceTopic, ResourceName: name, Name: rapid.SampledFrom([]string{ConfigRetentionMs, ConfigSegmentMs}).Draw(t, "config")}
			if rapid.Bool().Draw(t, "set") {
				config.Value = &value
			}
			apply(Record{Config: config})
		case 6: // a broker config
			value := "x"
			apply(Record{Config: &ConfigRecord{ResourceType: ResourceBroker, ResourceName: "1", Name: "some.setting", Value: &value}})
		case 8: // a deposed broker caught up
			ids := img.BrokerIDs()
			if len(ids) == 0 {
				continue
			}
			b := img.Brokers[rapid.SampledFrom(ids).Draw(t, "broker")]
			apply(Record{BrokerCaughtUp: &BrokerCaughtUpRecord{BrokerID: b.ID, BrokerEpoch: b.Epoch}})
		case 7: // a producer id block
			apply(Record{ProducerIDs: &ProducerIDsRecord{BrokerID: 1, BrokerEpoch: 1, NextProducerID: img.NextProducerID + 1000}})
		}
	}
	return img
}

// An unclean election is remembered for good: a later clean change keeps
// its epoch, and so does a snapshot, since a follower that was away may
// have to cut below its high watermark to follow long after.
func TestAnUncleanElectionIsRemembered(t *testing.T) {
	id := TopicID{3}
	leader := func(id int32) *int32 { return &id }
	records := []Record{
		{Topic: &TopicRecord{Name: "t", ID: id}},
		{Partition: &PartitionRecord{TopicID: id, Partition: 0, Replicas: []int32{1, 2}, ISR: []int32{1}, Leader: 1}},
		{PartitionChange: &PartitionChangeRecord{TopicID: id, Partition: 0, Leader: leader(-1)}},
		{PartitionChange: &PartitionChangeRecord{TopicID: id, Partition: 0, Leader: leader(2), ISR: []int32{2}, Unclean: true}},
		{PartitionChange: &PartitionChangeRecord{TopicID: id, Partition: 0, Leader: leader(1), ISR: []int32{2, 1}}},
	}
	img := NewImage()
	for i, r := range records {
		if err := img.Apply(int64(i), r); err != nil {
			t.Fatal(err)
		}
	}
	p := img.Topics["t"].Partitions[0]
	if p.LeaderEpoch != 3 || p.UncleanEpoch != 2 {
		t.Fatalf("leader epoch %d, unclean epoch %d; want 3 and 2", p.LeaderEpoch, p.UncleanEpoch)
	}
	rebuilt, err := ImageFromRecords(img.Offset, img.Records())
	if err != nil {
		t.Fatal(err)
	}
	if got := rebuilt.Topics["t"].Partitions[0].UncleanEpoch; got != 2 {
		t.Fatalf("the snapshot's image has unclean epoch %d, want 2", got)
	}
	err = img.Apply(int64(len(records)), Record{PartitionChange: &PartitionChangeRecord{TopicID: id, Partition: 0, ISR: []int32{1}, Unclean: true}})
	if err == nil {
		t.Fatal("an unclean change without a new leader was applied")
	}
}
