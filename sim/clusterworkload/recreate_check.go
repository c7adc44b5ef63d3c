package clusterworkload

import (
	"fmt"

	"sluice/core/batch"
	"sluice/jepsen/history"
)

// The checks of a recreated topic (recreates.go), once the liveness phase
// has settled the operator: every replica of the last incarnation's
// partitions must come to hold the same log (awaitRecreatedTopics, within
// the liveness bound), and that log must hold every record confirmed in
// the last incarnation (acknowledged, then read back by its topic id), at
// its offset, and nothing acknowledged to an earlier one
// (checkRecreatedTopics).

// recreatedTopic reports whether the operator deletes and creates topic
// again.
func (r *run) recreatedTopic(topic string) bool {
	t, _ := r.scenario.Topic(topic)
	return t.Recreated()
}

// recreatedPartitions lists the recreated topics' partitions, in order.
func (r *run) recreatedPartitions() []history.TopicPartition {
	var all []history.TopicPartition
	for _, rc := range r.recreations {
		for p := range int32(rc.topic.Partitions) {
			all = append(all, history.TopicPartition{Topic: rc.topic.Name, Partition: p})
		}
	}
	return all
}

// awaitRecreatedTopics waits, until deadline, for every replica of every
// recreated partition to hold the same log to the same end. A replica
// still holding a record acknowledged to an earlier incarnation then
// fails deleted-topic-resurrected; replicas that disagree fail
// replica-divergence, and replicas short of the others replica-liveness.
func (r *run) awaitRecreatedTopics(deadline int64) bool {
	if len(r.recreations) == 0 {
		return true
	}
	problem, diverged := "not looked at yet", false
	for r.violation == nil {
		if problem, diverged = r.recreatedReplicasApart(); problem == "" {
			return true
		}
		next := r.kernel.Now() + int64(replicaCheckInterval)
		if next > deadline {
			switch resurrected := r.findResurrected(); {
			case resurrected != "":
				r.fail("deleted-topic-resurrected", resurrected)
			case diverged:
				r.fail("replica-divergence", fmt.Sprintf("replicas of a recreated topic still disagree %v after the heal: %s", r.scenario.Liveness, problem))
			default:
				r.fail("replica-liveness", fmt.Sprintf("replicas of a recreated topic did not catch up within %v of the heal: %s", r.scenario.Liveness, problem))
			}
			return false
		}
		r.runWhile(next, func() bool { return true })
	}
	return false
}

// recreatedReplicasApart names a replica of a recreated partition that is
// down, unreadable or short of another's end, or replicas that disagree
// below it (diverged), or returns "".
func (r *run) recreatedReplicasApart() (problem string, diverged bool) {
	for _, tp := range r.recreatedPartitions() {
		end := int64(-1)
		logs, problem := r.readLiveReplicaLogs(tp, func(name string, log replicaLog) string {
			if end >= 0 && log.end != end {
				return fmt.Sprintf("%s's %s ends at %d, another replica's at %d", name, tp, log.end, end)
			}
			end = log.end
			return ""
		})
		if problem != "" {
			return problem, false
		}
		if problem, _ := r.compareReplicas(tp, end, logs); problem != "" {
			return problem, true
		}
	}
	return "", false
}

// checkRecreatedTopics reads the converged replicas of every recreated
// partition and checks what they hold against what the operator wrote.
func (r *run) checkRecreatedTopics() {
	r.eachRecreatedReplica(func(rc *recreation, tp history.TopicPartition, node int32) bool {
		r.checkRecreatedReplica(rc, tp, node)
		return r.violation == nil
	})
}

// eachRecreatedReplica calls visit for every replica of every recreated
// partition, in order, while it returns true.
func (r *run) eachRecreatedReplica(visit func(rc *recreation, tp history.TopicPartition, node int32) bool) {
	for _, rc := range r.recreations {
		for p := range int32(rc.topic.Partitions) {
			tp := history.TopicPartition{Topic: rc.topic.Name, Partition: p}
			for _, id := range r.replicas[tp] {
				if !visit(rc, tp, id) {
					return
				}
			}
		}
	}
}

// storedValue is one record of a replica's log: its offset and value.
type storedValue struct {
	offset int64
	value  string
}

// valuesOf decodes the records of a replica's log, up to the first batch
// that cannot be decoded, which it describes in the error.
func valuesOf(log []storedBatch) ([]storedValue, error) {
	var values []storedValue
	for _, b := range log {
		records, err := batch.Records(b.bytes)
		if err != nil {
			return values, fmt.Errorf("%s cannot be decoded: %v", describeBatch(b), err)
		}
		for _, record := range records {
			values = append(values, storedValue{offset: b.header.BaseOffset + int64(record.OffsetDelta), value: string(record.Value)})
		}
	}
	return values, nil
}

// deletedWrite returns the write of value when it was acknowledged to an
// incarnation since deleted.
func (rc *recreation) deletedWrite(value string) (recreatedWrite, bool) {
	index, written := rc.byValue[value]
	if !written || !rc.writes[index].acked || rc.writes[index].incarnation >= rc.incarnation {
		return recreatedWrite{}, false
	}
	return rc.writes[index], true
}

// checkRecreatedReplica checks one replica of the last incarnation.
func (r *run) checkRecreatedReplica(rc *recreation, tp history.TopicPartition, node int32) {
	name := r.nodes[node-1].name
	log, _, err := readReplicaLog(r.nodes[node-1].machine.Disk, tp)
	if err != nil {
		r.fail("replica-liveness", fmt.Sprintf("%s's %s cannot be read: %v", name, tp, err))
		return
	}
	values, err := valuesOf(log)
	if err != nil {
		r.fail("replica-divergence", fmt.Sprintf("%s's %s: %v", name, tp, err))
		return
	}
	found := map[string]int64{}
	for _, v := range values {
		if _, written := rc.byValue[v.value]; !written {
			r.fail("deleted-topic-resurrected", fmt.Sprintf("%s's %s holds %q at offset %d, which the operator never wrote", name, tp, v.value, v.offset))
			return
		}
		if w, deleted := rc.deletedWrite(v.value); deleted {
			r.fail("deleted-topic-resurrected", fmt.Sprintf("%s's %s (incarnation %d, topic id %s) holds %q at offset %d, acknowledged at offset %d to incarnation %d, which was deleted",
				name, tp, rc.incarnation, rc.id, v.value, v.offset, w.offset, w.incarnation))
			return
		}
		found[v.value] = v.offset
	}
	for _, w := range rc.writes {
		if w.incarnation != rc.incarnation || w.partition != tp.Partition || !w.confirmed {
			continue
		}
		offset, present := found[w.value]
		switch {
		case !present:
			r.fail("recreated-topic-write-lost", fmt.Sprintf("%s's %s (incarnation %d) lacks %q, acknowledged at offset %d", name, tp, rc.incarnation, w.value, w.offset))
			return
		case offset != w.offset:
			r.fail("recreated-topic-write-lost", fmt.Sprintf("%s's %s (incarnation %d) holds %q at offset %d, acknowledged at %d", name, tp, rc.incarnation, w.value, offset, w.offset))
			return
		}
	}
}

// findResurrected names a record acknowledged to a deleted incarnation
// that a replica of the last one holds, or returns "".
func (r *run) findResurrected() string {
	found := ""
	r.eachRecreatedReplica(func(rc *recreation, tp history.TopicPartition, node int32) bool {
		n := r.nodes[node-1]
		log, _, err := readReplicaLog(n.machine.Disk, tp)
		if err != nil {
			return true
		}
		values, _ := valuesOf(log) // what decodes: the failure is named anyway
		for _, v := range values {
			if w, deleted := rc.deletedWrite(v.value); deleted {
				found = fmt.Sprintf("%s's %s (incarnation %d) holds %q at offset %d, acknowledged to incarnation %d, which was deleted",
					n.name, tp, rc.incarnation, v.value, v.offset, w.incarnation)
				return false
			}
		}
		return true
	})
	return found
}

// recreationCounts sums the operators' work: incarnations created and
// learned after the first, values written, those acknowledged, and those
// read back by topic id.
func (r *run) recreationCounts() (recreated, writes, acked, confirmed int) {
	for _, rc := range r.recreations {
		recreated += rc.recreated
		for _, w := range rc.writes {
			writes++
			if w.acked {
				acked++
			}
			if w.confirmed {
				confirmed++
			}
		}
	}
	return recreated, writes, acked, confirmed
}
