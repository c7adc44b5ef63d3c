package brokerworkload

import (
	"fmt"
	"maps"
	"slices"
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
	recording := &sim.Recording{Workload: Name, Nodes: []string{nodeName}}
	for i := range r.settings.producers {
		recording.Clients = append(recording.Clients, fmt.Sprintf("p%d", i+1))
	}
	for i := range r.settings.readers {
		recording.Clients = append(recording.Clients, fmt.Sprintf("r%d", i+1))
	}
	for i := range r.settings.group.consumers {
		recording.Clients = append(recording.Clients, fmt.Sprintf("c%d", i+1))
	}
	recording.Clients = append(recording.Clients, "drain")
	return recording
}

// record adds an event at the current virtual time.
func (r *run) record(kind sim.EventKind, label string, hosts []string, text string) {
	if r.recording == nil {
		return
	}
	r.recording.Add(sim.Event{At: time.Duration(r.kernel.Now()), Kind: kind, Label: label, Hosts: hosts, Text: text})
}

// recordFaultStart opens a lasting fault on one host.
func (r *run) recordFaultStart(label, host, text string) {
	if r.recording == nil {
		return
	}
	r.openFaults[label] = host
	r.record(sim.EventFaultStart, label, []string{host}, text)
}

// recordFaultEnd closes a lasting fault, if it is still open.
func (r *run) recordFaultEnd(label string) {
	if r.recording == nil {
		return
	}
	host, open := r.openFaults[label]
	if !open {
		return
	}
	delete(r.openFaults, label)
	r.record(sim.EventFaultEnd, label, []string{host}, label+" ends")
}

// recordHealed closes every fault still open: heal ended them all.
func (r *run) recordHealed() {
	for _, label := range slices.Sorted(maps.Keys(r.openFaults)) {
		r.recordFaultEnd(label)
	}
}
