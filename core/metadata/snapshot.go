package metadata

import (
	"fmt"
	"slices"
	"sort"
)

// Snapshots of the image, as records. The quorum (core/quorum) truncates
// the metadata log at its start once a snapshot covers it, and sends a
// snapshot to a node too far behind to catch up from the log. A snapshot is
// the image written as the records that rebuild it, as KRaft's are: the
// same record types, so there is one decoder and one Apply, and a snapshot
// read with any Kafka tool looks like a short metadata log.

// Records returns the records that rebuild the image from an empty one, in
// a fixed order: brokers by id (each registration, then its unfencing if it
// is unfenced), topics by name (the topic, its configs by name, its
// partitions by index), the configs of other resources, and the producer id
// block. Replaying them with ImageFromRecords gives an image equal to this
// one. Nothing here depends on map order.
func (img *Image) Records() []Record {
	// Every node snapshots its image every so often: the list is made at
	// its size, and the partitions, most of the records, are allocated
	// together.
	size, partitions := 2*len(img.Brokers)+1, 0
	for _, values := range img.Configs { // order-independent: a sum
		size += len(values)
	}
	for _, t := range img.Topics { // order-independent: sums
		size += 1 + len(t.Partitions)
		partitions += len(t.Partitions)
	}
	records := make([]Record, 0, size)
	partitionRecords := make([]PartitionRecord, 0, partitions)
	for _, id := range img.BrokerIDs() {
		b := img.Brokers[id]
		records = append(records, Record{RegisterBroker: &RegisterBrokerRecord{
			BrokerID: b.ID, IncarnationID: b.IncarnationID, BrokerEpoch: b.Epoch,
			Host: b.Host, Port: b.Port, Rack: b.Rack,
		}})
		// A registration fences (applyRegisterBroker); only the
		// unfenced need a second record.
		if !b.Fenced {
			records = append(records, Record{BrokerFence: &BrokerFenceRecord{BrokerID: b.ID, BrokerEpoch: b.Epoch, Fenced: false}})
		}
	}
	for _, name := range img.TopicNames() {
		t := img.Topics[name]
		records = append(records, Record{Topic: &TopicRecord{Name: t.Name, ID: t.ID}})
		records = append(records, configRecords(ConfigResource{Type: ResourceTopic, Name: t.Name}, img.Configs)...)
		for _, p := range t.Partitions {
			partitionRecords = append(partitionRecords, PartitionRecord{
				TopicID:          t.ID,
				Partition:        p.Index,
				Replicas:         slices.Clone(p.Replicas),
				ISR:              slices.Clone(p.ISR),
				Leader:           p.Leader,
				LeaderEpoch:      p.LeaderEpoch,
				PartitionEpoch:   p.PartitionEpoch,
				UncleanEpoch:     p.UncleanEpoch,
				AddingReplicas:   slices.Clone(p.AddingReplicas),
				RemovingReplicas: slices.Clone(p.RemovingReplicas),
				Deposed:          slices.Clone(p.Deposed),
			})
			records = append(records, Record{Partition: &partitionRecords[len(partitionRecords)-1]})
		}
	}
	for _, resource := range sortedConfigResources(img.Configs) {
		if resource.Type == ResourceTopic {
			if _, exists := img.Topics[resource.Name]; exists {
				continue // written with its topic, above
			}
		}
		records = append(records, configRecords(resource, img.Configs)...)
	}
	if img.NextProducerID > 0 {
		records = append(records, Record{ProducerIDs: &ProducerIDsRecord{BrokerID: -1, BrokerEpoch: -1, NextProducerID: img.NextProducerID}})
	}
	return records
}

// ImageFromRecords rebuilds the image a snapshot describes: records as
// Records returns them, the state as of metadata log offset lastOffset.
// A record that does not apply means the snapshot is corrupt or from an
// incompatible writer, and is an error.
func ImageFromRecords(lastOffset int64, records []Record) (*Image, error) {
	img := NewImage()
	// Apply wants increasing offsets; a snapshot's records have none of
	// their own, so they get 0, 1, 2, ... and the image then takes the
	// snapshot's offset.
	for i, r := range records {
		if err := img.Apply(int64(i), r); err != nil {
			return nil, fmt.Errorf("metadata: snapshot at %d, record %d: %w", lastOffset, i, err)
		}
	}
	img.Offset = lastOffset
	return img, nil
}

// configRecords lists one resource's configs as ConfigRecords, by name.
func configRecords(resource ConfigResource, configs map[ConfigResource]map[string]string) []Record {
	values := configs[resource]
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	sort.Strings(names)
	records := make([]Record, 0, len(names))
	for _, name := range names {
		value := values[name]
		records = append(records, Record{Config: &ConfigRecord{ResourceType: resource.Type, ResourceName: resource.Name, Name: name, Value: &value}})
	}
	return records
}

// sortedConfigResources lists the resources with configs, by type then
// name.
func sortedConfigResources(configs map[ConfigResource]map[string]string) []ConfigResource {
	resources := make([]ConfigResource, 0, len(configs))
	for resource := range configs {
		resources = append(resources, resource)
	}
	sort.Slice(resources, func(i, j int) bool {
		if resources[i].Type != resources[j].Type {
			return resources[i].Type < resources[j].Type
		}
		return resources[i].Name < resources[j].Name
	})
	return resources
}
