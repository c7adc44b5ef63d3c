package clusterworkload

import (
	"fmt"
	"strings"
	"time"

	"sluice/jepsen/checker"
	"sluice/jepsen/history"
	"sluice/sim"
)

// The run's recording (sim.Recording), kept only when the options ask for
// it (a report): each hook below is one call from where the thing
// happens, and does nothing when no recording is kept, so a sweep pays a
// nil check per event recorded.

// newRecording starts the recording of a run, when asked for.
func newRecording(r *run, options sim.RunOptions) *sim.Recording {
	if !options.Record {
		return nil // spares a sweep the names
	}
	var nodes []string
	for id := 1; id <= r.scenario.Cluster.Nodes; id++ {
		nodes = append(nodes, fmt.Sprintf("n%d", id))
	}
	return sim.NewRecording(options, Name, nodes, r.scenario.ClientNames())
}

// record adds an event at the current virtual time.
func (r *run) record(kind sim.EventKind, label string, hosts []string, text string) {
	r.recording.Record(time.Duration(r.kernel.Now()), kind, label, hosts, text)
}

// recordPhase marks the start of the safety or the liveness phase.
func (r *run) recordPhase(phase string) {
	r.recording.StartPhase(time.Duration(r.kernel.Now()), phase)
}

// recordFault records a fault's start (lasting) or an instant fault, on
// every host its label names.
func (r *run) recordFault(kind sim.EventKind, label string) {
	if r.recording == nil {
		return
	}
	r.record(kind, label, r.hostsIn(label), label)
}

// recordChecked keeps the history as the checks judged it.
func (r *run) recordChecked(ops []history.Op, options checker.Options) {
	r.recording.Checked(ops, options)
}

// hostsIn lists the nodes and clients a fault's label names
// ("partition-n1+n2|n3", "client-pause-g1-c1"): a name counts where no
// letter, digit or "-c" continues it.
func (r *run) hostsIn(label string) []string {
	var hosts []string
	names := append(append([]string{}, r.recording.Nodes...), r.recording.Clients...)
	for _, name := range names {
		for at := 0; ; {
			i := strings.Index(label[at:], name)
			if i < 0 {
				break
			}
			start, end := at+i, at+i+len(name)
			if boundary(label, start-1) && (end == len(label) || strings.ContainsRune("+|_ ", rune(label[end])) || (label[end] == '-' && !strings.HasPrefix(label[end:], "-c"))) {
				hosts = append(hosts, name)
				break
			}
			at = end
		}
	}
	return hosts
}

// boundary reports whether label[i] separates words (or i is before the
// start).
func boundary(label string, i int) bool {
	return i < 0 || strings.ContainsRune("-+|_ ", rune(label[i]))
}
