package brokerworkload

import (
	"fmt"
	"time"

	"sluice/sim"
)

// The run's recording (sim.Recording), kept only when the options ask for
// it (a report, --history): each hook below is one call from where the
// thing happens and does nothing when no recording is kept. Recording
// must never change the run, so no hook schedules anything: a fault's end
// is recorded by the event that ends it, or by heal.

// newRecording starts the recording of a run, when asked for: one node,
// and the clients in the order the workload makes them.
func newRecording(r *run, options sim.RunOptions) *sim.Recording {
	if !options.Record {
		return nil
	}
	var clients []string
	for i := range r.settings.producers {
		clients = append(clients, fmt.Sprintf("p%d", i+1))
	}
	for i := range r.settings.readers {
		clients = append(clients, fmt.Sprintf("r%d", i+1))
	}
	for i := range r.settings.group.consumers {
		clients = append(clients, fmt.Sprintf("c%d", i+1))
	}
	return sim.NewRecording(options, Name, []string{nodeName}, append(clients, "drain"))
}

func (r *run) now() time.Duration { return time.Duration(r.kernel.Now()) }

// record adds an event at the current virtual time.
func (r *run) record(kind sim.EventKind, label string, hosts []string, text string) {
	r.recording.Record(r.now(), kind, label, hosts, text)
}

// recordFaultStart opens a lasting fault on one host.
func (r *run) recordFaultStart(label, host, text string) {
	r.recording.FaultStart(r.now(), label, []string{host}, text)
}

// recordFaultEnd closes a lasting fault, if it is still open.
func (r *run) recordFaultEnd(label string) {
	r.recording.FaultEnd(r.now(), label)
}

// recordHealed closes every fault still open: heal ended them all.
func (r *run) recordHealed() {
	r.recording.EndOpenFaults(r.now())
}
