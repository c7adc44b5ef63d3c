package clusterworkload

import (
	"fmt"
	"time"
)

// The liveness phase: every fault ends (the network heals, paused nodes
// resume, disks and clocks are well again, every node and client is up),
// then, within the scenario's Liveness bound, the cluster must converge:
// every producer finishes what it has in flight and every reader its
// poll; a fresh reader drains every partition to its end, its leader's
// log end (final_drain.go; it needs a leader that serves for each, and a
// high watermark that has caught up with that end); every group settles with
// each partition assigned once and commits every partition's end;
// every replica of every partition holds the leader's log up to that end;
// and every node lists every broker (brokers_listed.go).

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
		if r.growing() || r.recreating() || r.altering() || r.electing() || r.reassigning() {
			return false
		}
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
		return r.livenessFailed(fmt.Sprintf("producers and readers still busy, or a topic not yet grown, created again, reconfigured, through its elections or its reassignments, %v after the heal", s.Liveness))
	}
	r.runWhile(r.kernel.Now()+int64(settleDelay), func() bool { return true })
	if r.violation != nil {
		return false
	}
	// Nothing is sent any more, so where the final drain stops is each
	// partition's end, which the groups and every replica must reach.
	ends := r.finalDrain(deadline)
	if ends == nil {
		return false
	}
	for _, g := range r.groups {
		if !r.convergeGroup(g, ends, deadline) {
			return false
		}
	}
	return r.awaitReassignments(deadline) && r.awaitReplicas(ends, deadline) &&
		r.awaitRecreatedTopics(deadline) && r.awaitAlteredConfigs(deadline) &&
		r.awaitBrokersListed(deadline)
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
	for _, g := range r.growths {
		if !g.learned {
			text += fmt.Sprintf(" %s growing to %d: grown=%v after %d requests", g.topic.Name, g.topic.GrowTo, g.grown, g.attempts)
		}
	}
	for _, rc := range r.recreations {
		if rc.busy {
			text += fmt.Sprintf(" %s incarnation %d not yet created and written", rc.topic.Name, rc.incarnation)
		}
	}
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
