package brokerworkload

import (
	"fmt"

	"sluice/jepsen/history"
	"sluice/sim/simclient"
)

// converge is the liveness phase: faults stop, the broker comes up, the
// producers finish what they have in flight, and a fresh reader drains
// every partition to its end, all within livenessMax; then the group
// settles and commits every partition's end, within groupLivenessMax
// (group_liveness.go).
func (r *run) converge() *violation {
	r.note("liveness phase")
	r.recording.StartPhase(r.now(), "liveness")
	deadline := r.kernel.Now() + int64(livenessMax)
	r.heal()
	r.stopSending = true
	for _, reader := range r.readers {
		reader.Stop()
	}
	settled := func() bool {
		for _, d := range r.producers {
			if d.producer.InFlight() > 0 {
				return false
			}
		}
		for _, reader := range r.readers {
			if !reader.Idle() {
				return false
			}
		}
		return true
	}
	if !r.kernel.RunWhile(deadline, func() bool { return !settled() }) {
		return &violation{"liveness", fmt.Sprintf("producers and readers still busy %v after the faults stopped: %s", livenessMax, r.pending())}
	}
	r.kernel.RunUntil(r.kernel.Now() + int64(settleDelay))
	c := r.newClient("drain")
	r.drainer = simclient.NewReader(c, simclient.ReaderConfig{FetchMaxWait: r.settings.fetchMaxWait}, r.recorder, r.processes)
	var all []history.TopicPartition
	for p := range int32(r.settings.partitions) {
		all = append(all, history.TopicPartition{Topic: topicName, Partition: p})
	}
	if err := r.drainer.Assign(all); err != nil {
		panic(fmt.Sprintf("brokerworkload: assign the drain: %v", err))
	}
	drained := false
	r.drainer.Drain(func() { drained = true })
	if !r.kernel.RunWhile(deadline, func() bool { return !drained }) {
		return &violation{"liveness", fmt.Sprintf("the final drain did not finish within %v of the faults stopping: %s", livenessMax, r.pending())}
	}
	// Nothing is sent any more, so where the drain stopped is each
	// partition's end, which the group must now reach too.
	targets := map[history.TopicPartition]int64{}
	for _, tp := range all {
		targets[tp] = r.drainer.Position(tp)
	}
	return r.convergeGroup(targets)
}

// pending describes what a liveness failure was waiting for.
func (r *run) pending() string {
	text := fmt.Sprintf("broker up=%v", r.node.up)
	if r.node.lastStartError != nil {
		text += fmt.Sprintf(" last start error=%q", r.node.lastStartError)
	}
	for _, d := range r.producers {
		text += fmt.Sprintf(" p%d in flight=%d", d.index, d.producer.InFlight())
	}
	if r.drainer != nil {
		for p := range int32(r.settings.partitions) {
			tp := history.TopicPartition{Topic: topicName, Partition: p}
			text += fmt.Sprintf(" drain %s at %d", tp, r.drainer.Position(tp))
		}
	}
	return text
}
