package controller

import (
	"slices"

	"sluice/core/metadata"
)

// A fenced broker is unfenced once its heartbeat shows it has applied the
// metadata that concerns it (heartbeat.go). Its registration is not
// enough: a broker cut off from the controller for longer than its
// session is fenced, and its leaderships move to other replicas, while it
// still believes it leads them. When it comes back, its image may be past
// its registration but before its fencing. Unfenced then, its heartbeat
// would renew its controller lease (core/broker, holdsLease) and it would
// answer OffsetFetch as the coordinator of an offsets partition another
// broker now leads, with offsets older than those acknowledged since.
// So the offset it must reach moves forward with every record that
// registers it, fences it, takes a partition's leadership from it, or
// takes a replica from it (a reassignment, a topic's deletion).
//
// An unfenced broker renews its lease only from a heartbeat that shows it
// caught up to that offset too (IsCaughtUp): a broker a reassignment took
// a replica from, while its metadata lags, still believes it hosts, and
// perhaps leads, the partition, and must stop serving it before the new
// leader's DeleteRecords answers may leave it out (core/replica,
// lowWatermark, which counts such a replica for a session after its
// removal).

// brokersConcernedBy returns the brokers whose catch-up offset record r
// moves forward. It reads the image as it stands before r is applied: a
// leadership or replica change is judged against the partition r changes.
func (c *Controller) brokersConcernedBy(r metadata.Record) []int32 {
	switch {
	case r.RegisterBroker != nil:
		return []int32{r.RegisterBroker.BrokerID}
	case c.w.Canaries.On(CanaryUnfenceBeforeCaughtUp):
		return nil
	case r.BrokerFence != nil && r.BrokerFence.Fenced:
		return []int32{r.BrokerFence.BrokerID}
	case r.PartitionChange != nil:
		change := r.PartitionChange
		topic, known := c.image.TopicsByID[change.TopicID]
		if !known || change.Partition < 0 || int(change.Partition) >= len(topic.Partitions) {
			return nil // the image refuses the record; nothing to track
		}
		p := topic.Partitions[change.Partition]
		var concerned []int32
		if change.Leader != nil && p.Leader >= 0 && p.Leader != *change.Leader {
			concerned = append(concerned, p.Leader)
		}
		if change.Replicas != nil {
			for _, id := range minus(p.Replicas, change.Replicas) {
				if !slices.Contains(concerned, id) {
					concerned = append(concerned, id)
				}
			}
		}
		return concerned
	case r.RemoveTopic != nil:
		// Every replica goes: a leader that has not applied the
		// deletion still serves the topic, by name too, which a new
		// topic of that name may soon take.
		topic, known := c.image.TopicsByID[r.RemoveTopic.TopicID]
		if !known {
			return nil
		}
		var concerned []int32
		for _, p := range topic.Partitions {
			for _, id := range p.Replicas {
				if !slices.Contains(concerned, id) {
					concerned = append(concerned, id)
				}
			}
		}
		return concerned
	}
	return nil
}
