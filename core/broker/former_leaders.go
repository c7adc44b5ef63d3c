package broker

import (
	"slices"
	"time"

	"sluice/core/metadata"
	"sluice/core/replica"
)

// formerLeaders remembers when this broker learned of each deposition
// the image records (metadata.Partition.Deposed: the former leaders of a
// partition that were not fenced since), so that the partition's next
// leader here holds its high watermark until none of them can still serve
// (core/replica, takeover.go). A deposed broker's lease has surely run out
// a session after this broker learned of the deposition, by its clock,
// within a factor of two of the deposed one's: the deposed broker renewed
// its lease last before the controller committed the change.
//
// A deposition this broker did not see happen, only found in a snapshot's
// image (at start, or one restored from the leader), counts from then:
// until unknownUntil, a session later.
type formerLeaders struct {
	learned      map[partitionKey][]replica.FormerLeader
	unknownUntil time.Duration
}

// historyUnknown starts a session in which the image's depositions are
// counted from now: it comes from a snapshot.
func (b *Broker) historyUnknown() {
	b.formerLeaders.unknownUntil = b.w.Clock.Elapsed() + b.config.SessionTimeout
	b.formerLeaders.learned = nil
}

// noteDeposition records, before r is applied to the image, when this
// broker learned that r takes a partition from its leader.
func (b *Broker) noteDeposition(r metadata.Record) {
	change := r.PartitionChange
	if change == nil || change.Leader == nil {
		return
	}
	t, known := b.image.TopicsByID[change.TopicID]
	if !known || change.Partition < 0 || int(change.Partition) >= len(t.Partitions) {
		return
	}
	old := t.Partitions[change.Partition].Leader
	if old < 0 || old == *change.Leader || old == b.config.NodeID {
		return
	}
	key := partitionKey{topic: t.Name, partition: change.Partition}
	now := b.w.Clock.Elapsed()
	if b.formerLeaders.learned == nil {
		b.formerLeaders.learned = map[partitionKey][]replica.FormerLeader{}
	}
	kept := slices.DeleteFunc(b.formerLeaders.learned[key], func(f replica.FormerLeader) bool {
		return f.Until <= now || f.ID == old
	})
	b.formerLeaders.learned[key] = append(kept, replica.FormerLeader{ID: old, Until: now + b.config.SessionTimeout})
}

// formerLeadersOf returns the former leaders a new leadership of p here
// must wait for: the image's deposed brokers, other than this one, that
// are unfenced and whose lease may not have run out yet.
func (b *Broker) formerLeadersOf(key partitionKey, p *metadata.Partition) []replica.FormerLeader {
	var formers []replica.FormerLeader
	now := b.w.Clock.Elapsed()
	learned := b.formerLeaders.learned[key]
	for _, id := range p.Deposed {
		if broker, registered := b.image.Brokers[id]; id == b.config.NodeID || !registered || broker.Fenced {
			continue
		}
		until := b.formerLeaders.unknownUntil
		if i := slices.IndexFunc(learned, func(f replica.FormerLeader) bool { return f.ID == id }); i >= 0 {
			until = max(until, learned[i].Until)
		}
		if until > now {
			formers = append(formers, replica.FormerLeader{ID: id, Until: until})
		}
	}
	return formers
}

// forgetExpiredDepositions drops the times no leadership needs any more.
func (b *Broker) forgetExpiredDepositions() {
	now := b.w.Clock.Elapsed()
	// order-independent: each entry is kept or deleted on its own.
	for key, formers := range b.formerLeaders.learned {
		if !slices.ContainsFunc(formers, func(f replica.FormerLeader) bool { return f.Until > now }) {
			delete(b.formerLeaders.learned, key)
		}
	}
}

// formerLeaderCaughtUp tells every partition this broker leads that
// broker id has applied every record that deposed it.
func (b *Broker) formerLeaderCaughtUp(id int32) {
	for _, key := range b.sortedPartitionKeys() {
		b.partitions[key].FormerLeaderCaughtUp(id)
	}
}

// formerLeadersMayHaveGone tells every partition this broker leads that a
// broker was fenced or registered again (its old process gone).
func (b *Broker) formerLeadersMayHaveGone() {
	for _, key := range b.sortedPartitionKeys() {
		b.partitions[key].FormerLeadersMayHaveGone()
	}
}
