package clusterworkload

import (
	"fmt"
	"time"

	"sluice/jepsen/history"
	"sluice/sim/simclient"
)

// The liveness phase: every fault ends (the network heals, paused nodes
// resume, disks and clocks are well again, every node and client is up),
// then, within the scenario's Liveness bound, the cluster must converge:
// every producer finishes what it has in flight and every reader its
// poll; a fresh reader drains every partition to its high watermark
// (which needs a leader that serves for each); every group settles with
// each partition assigned once and commits every partition's end; and
// every replica of every partition holds the leader's log up to that end.

// settleDelay is the pause between the producers finishing and the drain
// starting: the last acks=1 appends reach the followers and the high
// watermarks cover them, unless a crash took them.
const settleDelay = time.Second

// converge runs the liveness phase and reports whether everything
// converged in time (a failure is recorded as a violation).
func (r *run) converge() bool {
	s := r.scenario
	deadline := r.kernel.Now() + int64(s.Liveness)
	r.nemesis.healAll()
	r.stopSending = true
	for _, d := range r.readers {
		d.reader.Stop()
	}
	settled := func() bool {
		for _, d := range r.producers {
			if d.producer.InFlight() > 0 {
				return false
			}
		}
		for _, d := range r.readers {
			if !d.reader.Idle() {
				return false
			}
		}
		return true
	}
	if !r.runWhile(deadline, func() bool { return !settled() }) {
		return r.livenessFailed(fmt.Sprintf("producers and readers still busy %v after the heal", s.Liveness))
	}
	r.runWhile(r.kernel.Now()+int64(settleDelay), func() bool { return true })
	if r.violation != nil {
		return false
	}
	r.drainer = simclient.NewReader(r.newClient("drain"), simclient.ReaderConfig{FetchMaxWait: s.Timeouts.FetchWait}, r.recorder, r.processes)
	all := r.allPartitions()
	if err := r.drainer.Assign(all); err != nil {
		panic(fmt.Sprintf("clusterworkload: assign the drain: %v", err))
	}
	drained := false
	r.drainer.Drain(func() { drained = true })
	if !r.runWhile(deadline, func() bool { return !drained }) {
		return r.livenessFailed(fmt.Sprintf("the final drain did not finish within %v of the heal", s.Liveness))
	}
	// Nothing is sent any more, so where the drain stopped is each
	// partition's end, which the groups and every replica must reach.
	ends := map[history.TopicPartition]int64{}
	for _, tp := range all {
		ends[tp] = r.drainer.Position(tp)
	}
	for _, g := range r.groups {
		if !r.convergeGroup(g, ends, deadline) {
			return false
		}
	}
	return r.awaitReplicas(ends, deadline)
}

// livenessFailed records a liveness failure with where everything stands.
func (r *run) livenessFailed(what string) bool {
	if r.violation == nil {
		r.fail("liveness", what+": "+r.pending())
	}
	return false
}

// pending describes what a liveness failure was waiting for.
func (r *run) pending() string {
	text := "nodes:" + r.describeNodes() + r.nemesis.describe()
	for _, d := range r.producers {
		if n := d.producer.InFlight(); n > 0 {
			text += fmt.Sprintf(" %s in flight=%d", d.settings.Name, n)
		}
	}
	if r.drainer != nil {
		for _, tp := range r.allPartitions() {
			text += fmt.Sprintf(" drain %s at %d", tp, r.drainer.Position(tp))
		}
	}
	return text
}
