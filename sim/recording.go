package sim

import (
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
