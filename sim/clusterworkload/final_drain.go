package clusterworkload

import (
	"fmt"
	"time"

	"sluice/jepsen/history"
	"sluice/sim/simclient"
)

// The final drain finds each partition's end: the offset the groups must
// commit and every replica must reach. A drain reads up to the high
// watermark it is told when it begins, and after the heal that can still
// be short of where the partition ends for good. A leader may hold
// appends above its high watermark that nobody has lost: acks=1 appends
// made while the ISR was below min.insync.replicas (the high watermark
// does not move then), or while a follower that counts was cut off. Once
// the followers fetch them they commit, and a group reads and commits
// past the end the drain took (seeds 2921 and 4607). So the drain goes
// again until it has read up to its partition leader's log end: nothing
// is sent any more, so that is where the partition ends, unless a later
// election cuts an uncommitted tail, which the next look sees.
//
// Waiting for the leader's log end hides no loss: a committed record a
// truncation took is gone from the new leader's log too, so the drain
// stops below what a group read, and group-liveness fails as before.

// drainRetryInterval is the pause before the drain goes again after it
// stopped short of some leader's log end.
const drainRetryInterval = 100 * time.Millisecond

// finalDrain reads every partition, with a fresh reader, to its end
// (see above), until deadline, and returns the ends, or nil after
// recording a liveness failure.
func (r *run) finalDrain(deadline int64) map[history.TopicPartition]int64 {
	r.drainer = simclient.NewReader(r.newClient("drain"), simclient.ReaderConfig{FetchMaxWait: r.scenario.Timeouts.FetchWait}, r.recorder, r.processes)
	all := r.allPartitions()
	if err := r.drainer.Assign(all); err != nil {
		panic(fmt.Sprintf("clusterworkload: assign the drain: %v", err))
	}
	for {
		drained := false
		r.drainer.Drain(func() { drained = true })
		if !r.runWhile(deadline, func() bool { return !drained }) {
			r.livenessFailed(fmt.Sprintf("the final drain did not finish within %v of the heal", r.scenario.Liveness))
			return nil
		}
		short := r.drainShortOfLeader(all)
		if short == "" {
			break
		}
		next := r.kernel.Now() + int64(drainRetryInterval)
		if next > deadline {
			r.livenessFailed(fmt.Sprintf("the final drain did not reach every leader's log end within %v of the heal: %s", r.scenario.Liveness, short))
			return nil
		}
		r.counts.drainsAgain++
		r.note("drain again: " + short)
		r.runWhile(next, func() bool { return true })
		if r.violation != nil {
			return nil
		}
	}
	ends := map[history.TopicPartition]int64{}
	for _, tp := range all {
		ends[tp] = r.drainer.Position(tp)
	}
	return ends
}

// drainShortOfLeader names a partition whose latest leader is not known
// to be up with a log that ends where the drain stopped, or returns "".
// The leader's log is read from its disk, as replicas.go reads every
// replica's: a leader's files show all it has appended, synced or not.
func (r *run) drainShortOfLeader(partitions []history.TopicPartition) string {
	for _, tp := range partitions {
		leader, known := r.observer.partitionLeader[tp.String()]
		if !known {
			return tp.String() + " has had no leader"
		}
		n := r.nodes[leader.node-1]
		if !n.up {
			return fmt.Sprintf("%s's leader %s is down", tp, n.name)
		}
		_, end, err := readReplicaLog(n.machine.Disk, tp)
		if err != nil {
			return fmt.Sprintf("%s's %s: %v", n.name, tp, err)
		}
		if position := r.drainer.Position(tp); position < end {
			return fmt.Sprintf("%s drained to %d, its leader %s's log ends at %d", tp, position, n.name, end)
		}
	}
	return ""
}
