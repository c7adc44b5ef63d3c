package sim

import (
	"maps"
	"slices"
	"time"

	"sluice/jepsen/checker"
	"sluice/jepsen/history"
)

// Recording is what one run saw, kept for a report (sim/report) when
// RunOptions.Record asks for it: the hosts, a structured log of what
// happened to them (faults, crashes, restarts, leaders elected), and the
// client history exactly as the checks judged it, with the options they
// ran with, so a report can run porcupine again on the failing partition
// and draw its visualization. A workload that keeps no recording leaves
// Result.Recording nil.
type Recording struct {
	// Workload names the workload that ran.
	Workload string
	// Nodes and Clients are the hosts, in the order a timeline lists
	// them.
	Nodes   []string
	Clients []string
	// Events are in time order.
	Events []Event
	// SafetyStart and LivenessStart are when the phases began; zero when
	// the run never reached one.
	SafetyStart, LivenessStart time.Duration
	// History is the history as checked; Checker the options the whole
	// history checks ran with. Both empty when the run ended before the
	// checks.
	History []history.Op
	Checker checker.Options
	// Dropped counts the events past recordingEventsMax.
	Dropped int

	// open are the lasting faults begun with FaultStart and not yet
	// ended, by label: the hosts each concerns.
	open map[string][]string
}

// Event is one thing that happened during a run.
type Event struct {
	At   time.Duration
	Kind EventKind
	// Label ties a fault's start to its end ("isolate-n2").
	Label string
	// Hosts are the nodes and clients concerned.
	Hosts []string
	// Text says what happened, for a reader.
	Text string
}

// EventKind is the kind of a recorded event.
type EventKind string

// The kinds of events a recording holds.
const (
	// EventFaultStart and EventFaultEnd bracket a fault that lasts (a
	// partition, a pause, a slow disk...), paired by Label.
	EventFaultStart EventKind = "fault-start"
	EventFaultEnd   EventKind = "fault-end"
	// EventFault is an instant fault: a clock jump, a connection reset.
	EventFault EventKind = "fault"
	// EventCrash, EventHalt and EventStart are a node's process dying,
	// halting itself (after a failed fsync), and starting.
	EventCrash EventKind = "crash"
	EventHalt  EventKind = "halt"
	EventStart EventKind = "start"
	// EventLeader is a node becoming a partition's leader; Text names
	// the partition and its leader epoch.
	EventLeader EventKind = "leader"
	// EventController is a node becoming leader of the metadata quorum
	// (the active controller) in an epoch.
	EventController EventKind = "controller"
	// EventPhase marks the start of a phase, EventViolation the first
	// failed check.
	EventPhase     EventKind = "phase"
	EventViolation EventKind = "violation"
)

// recordingEventsMax bounds a recording's events, so a run that spins
// cannot fill memory through its recording; what comes later is counted
// in Dropped.
const recordingEventsMax = 100_000

// Add appends an event, unless the recording is nil or full.
func (r *Recording) Add(e Event) {
	if r == nil {
		return
	}
	if len(r.Events) >= recordingEventsMax {
		r.Dropped++
		return
	}
	if n := len(r.Events); n > 0 && e.At < r.Events[n-1].At {
		panic("sim: recording events out of time order")
	}
	r.Events = append(r.Events, e)
}

// StartPhase marks the start of the safety or the liveness phase at at.
func (r *Recording) StartPhase(at time.Duration, phase string) {
	if r == nil {
		return
	}
	switch phase {
	case "safety":
		r.SafetyStart = at
	case "liveness":
		r.LivenessStart = at
	}
	r.Add(Event{At: at, Kind: EventPhase, Label: phase, Text: phase + " phase"})
}

// Checked keeps the history as the checks judged it, with the options
// they ran with.
func (r *Recording) Checked(ops []history.Op, options checker.Options) {
	if r == nil {
		return
	}
	r.History, r.Checker = ops, options
}

// FaultStart records the start of a lasting fault, unless one of that
// label is already open (the fault was struck again while it lasted; its
// first end ends it).
func (r *Recording) FaultStart(at time.Duration, label string, hosts []string, text string) {
	if r == nil {
		return
	}
	if _, open := r.open[label]; open {
		return
	}
	if r.open == nil {
		r.open = map[string][]string{}
	}
	r.open[label] = hosts
	r.Add(Event{At: at, Kind: EventFaultStart, Label: label, Hosts: hosts, Text: text})
}

// FaultEnd records the end of a lasting fault, if it is open.
func (r *Recording) FaultEnd(at time.Duration, label string) {
	if r == nil {
		return
	}
	hosts, open := r.open[label]
	if !open {
		return
	}
	delete(r.open, label)
	r.Add(Event{At: at, Kind: EventFaultEnd, Label: label, Hosts: hosts, Text: label + " ends"})
}

// EndOpenFaults ends every fault still open, as a heal does.
func (r *Recording) EndOpenFaults(at time.Duration) {
	if r == nil {
		return
	}
	for _, label := range slices.Sorted(maps.Keys(r.open)) {
		r.FaultEnd(at, label)
	}
}

// NewRecording starts the recording of one run of workload, on nodes and
// clients in the order a timeline lists them, when options ask for one.
// Otherwise it is nil, and every method of a nil Recording does nothing,
// so a workload calls its hooks unconditionally.
func NewRecording(options RunOptions, workload string, nodes, clients []string) *Recording {
	if !options.Record {
		return nil
	}
	return &Recording{Workload: workload, Nodes: nodes, Clients: clients}
}

// Record adds an event of kind at at.
func (r *Recording) Record(at time.Duration, kind EventKind, label string, hosts []string, text string) {
	if r == nil {
		return
	}
	r.Add(Event{At: at, Kind: kind, Label: label, Hosts: hosts, Text: text})
}
