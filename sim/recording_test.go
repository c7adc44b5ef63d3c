package sim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRecordingPairsLastingFaults(t *testing.T) {
	var none *Recording
	none.FaultStart(time.Second, "slow-disk-n1", []string{"n1"}, "slow")
	none.FaultEnd(2*time.Second, "slow-disk-n1")
	none.EndOpenFaults(3 * time.Second)
	none.Record(time.Second, EventCrash, "", []string{"n1"}, "crash n1")
	none.StartPhase(time.Second, "safety") // a nil recording takes every hook and keeps nothing

	r := NewRecording(RunOptions{Record: true}, "broker", []string{"n1"}, []string{"p1"})
	r.StartPhase(0, "safety")
	r.FaultStart(time.Second, "slow-disk-n1", []string{"n1"}, "slow")
	r.FaultStart(2*time.Second, "slow-disk-n1", []string{"n1"}, "slower") // struck again while it lasts: its first end ends it
	r.FaultStart(2*time.Second, "client-crash-p1", []string{"p1"}, "crash p1")
	r.FaultEnd(3*time.Second, "slow-disk-n1")
	r.FaultEnd(4*time.Second, "slow-disk-n1") // the second window's end: already over
	r.StartPhase(5*time.Second, "liveness")
	r.EndOpenFaults(5 * time.Second)
	type event struct {
		At    time.Duration
		Kind  EventKind
		Label string
	}
	var got []event
	for _, e := range r.Events {
		got = append(got, event{e.At, e.Kind, e.Label})
	}
	want := []event{
		{0, EventPhase, "safety"},
		{time.Second, EventFaultStart, "slow-disk-n1"},
		{2 * time.Second, EventFaultStart, "client-crash-p1"},
		{3 * time.Second, EventFaultEnd, "slow-disk-n1"},
		{5 * time.Second, EventPhase, "liveness"},
		{5 * time.Second, EventFaultEnd, "client-crash-p1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	if r.SafetyStart != 0 || r.LivenessStart != 5*time.Second {
		t.Fatalf("phases from %v and %v", r.SafetyStart, r.LivenessStart)
	}
	if NewRecording(RunOptions{}, "broker", nil, nil) != nil {
		t.Fatal("a recording nobody asked for")
	}
}
