package simclient

import "fmt"

// A group's assignment covers the partitions its leader knew of when it
// computed it. When an operator adds partitions to the subscribed topic,
// nothing in the group protocol tells the members: Kafka's consumer leader
// refreshes its metadata once it is metadata.max.age.ms old and, finding
// the topic grown past its assignment, rejoins, which makes the
// coordinator rebalance the group over the new count (ConsumerCoordinator
// compares its assignment snapshot with the metadata snapshot). Only the
// leader watches: it is the member that assigns.
//
// Like Kafka's consumer, it looks when its loop runs (step), not on a
// timer of its own: a watch that is not due schedules nothing.

// maybeWatchPartitions refreshes the metadata when the consumer leads a
// generation and its last look is MetadataMaxAge old, and asks for a
// rebalance if the topic has more partitions than the assignment covered.
func (g *GroupConsumer) maybeWatchPartitions() {
	m := &g.membership
	if !m.joined || m.leadPartitions == 0 || m.watching || g.client.Now() < m.watchDue {
		return
	}
	m.watching = true
	epoch := m.epoch
	g.client.RefreshMetadata(func(error) {
		if epoch != m.epoch {
			return // the generation is over; the next leader looks for itself
		}
		m.watching = false
		m.watchDue = g.client.Now() + int64(g.config.MetadataMaxAge)
		if count := int32(g.client.Partitions(g.config.Topic)); count > m.leadPartitions {
			g.stats.PartitionsGrown++
			g.client.note(fmt.Sprintf("%s has %d partitions, the assignment of generation %d covered %d; rejoining",
				g.config.Topic, count, m.generation, m.leadPartitions))
			m.rejoinNeeded = true
			g.schedule(0)
		}
	})
}
