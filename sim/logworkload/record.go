package logworkload

import (
	"time"

	"sluice/sim"
)

// The run's recording (sim.Recording), kept only when the options ask for
// it (a report): the machine's crashes, halts and recoveries, the
// full-disk windows and the phases. There are no clients and no network,
// so no client history; the trace says what each operation did. No hook
// schedules anything: a recorded run is the run.

// nodeName is the one machine's name.
const nodeName = "n1"

func (r *run) now() time.Duration { return time.Duration(r.kernel.Now()) }

// record adds an event at the current virtual time.
func (r *run) record(kind sim.EventKind, label string, hosts []string, text string) {
	r.recording.Record(r.now(), kind, label, hosts, text)
}
