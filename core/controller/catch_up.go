package controller

import "sluice/core/metadata"

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
// registers it, fences it, or takes a partition's leadership from it.

// brokerConcernedBy returns the broker whose catch-up offset record r
// moves forward, or -1 for none. It reads the image as it stands before
// r is applied: a leadership change is judged against the leader r
// replaces.
func (c *Controller) brokerConcernedBy(r metadata.Record) int32 {
	switch {
	case r.RegisterBroker != nil:
		return r.RegisterBroker.BrokerID
	case r.BrokerFence != nil && r.BrokerFence.Fenced:
		return r.BrokerFence.BrokerID
	case r.PartitionChange != nil && r.PartitionChange.Leader != nil:
		change := r.PartitionChange
		topic, known := c.image.TopicsByID[change.TopicID]
		if !known || change.Partition < 0 || int(change.Partition) >= len(topic.Partitions) {
			return -1 // the image refuses the record; nothing to track
		}
		if previous := topic.Partitions[change.Partition].Leader; previous >= 0 && previous != *change.Leader {
			return previous
		}
	}
	return -1
}
