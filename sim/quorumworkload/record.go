package quorumworkload

import (
	"fmt"
	"time"

	"sluice/sim"
)

// The run's recording (sim.Recording), kept only when the options ask for
// it (a report): the nodes' crashes and starts, the faults, the phases,
// and who led the quorum in which epoch, so a report's timeline shows
// two leaders of one epoch side by side. The workload has no Kafka
// clients, so there is no client history. No hook schedules anything: a
// recorded run is the run.

// newRecording starts the recording of a run, when asked for.
func newRecording(r *run, options sim.RunOptions) *sim.Recording {
	var nodes []string
	for id := int32(1); id <= int32(r.settings.voters+r.settings.observers); id++ {
		nodes = append(nodes, nodeName(id))
	}
	return sim.NewRecording(options, Name, nodes, nil)
}

func (r *run) now() time.Duration { return time.Duration(r.kernel.Now()) }

// record adds an event at the current virtual time.
func (r *run) record(kind sim.EventKind, label string, hosts []string, text string) {
	r.recording.Record(r.now(), kind, label, hosts, text)
}

// recordLeader notes that node id leads the quorum in epoch.
func (r *run) recordLeader(epoch, id int32) {
	r.record(sim.EventController, "", []string{nodeName(id)}, fmt.Sprintf("%s leads the quorum in epoch %d", nodeName(id), epoch))
}
